// Package analyze turns text into the index terms used for BM25 keyword
// search. Every store uses it, identically for documents and for queries, so
// a query term matches a document term exactly when both come from the same
// word.
//
// The pipeline, in one pass over the text:
//
//  1. Normalize to NFKC: full-width ASCII becomes ASCII, half-width katakana
//     becomes full-width, ligatures and compatibility characters (ﬁ, ①, ²)
//     are spelled out. Invalid UTF-8 bytes act as separators.
//  2. Split into tokens. A token is a run of letters and digits (any script);
//     everything else separates tokens, so "covid-19" is covid, 19 and
//     "3.14" is 3, 14. Han, Hiragana, Katakana (with the prolonged sound
//     mark ー) and Hangul each form their own runs, split at every change of
//     script and from neighbouring Latin letters and digits.
//  3. Fold case (Unicode lower case, final sigma to sigma) and strip the
//     diacritics of Latin letters (é → e, ü → u, ß → ss, æ → ae, ø → o).
//     Combining marks are kept inside words of other scripts.
//  4. Resolve apostrophes between letters: English clitics are removed
//     ("user's" → user, "don't" → do, "can't" → can, "we're" → we) and other
//     apostrophes join their parts ("o'clock" → oclock, "O'Brien" → obrien),
//     so no lone "s" or "t" is left over. Apostrophes elsewhere separate
//     tokens, as do apostrophes before a digit ("5'10" → 5, 10).
//  5. Drop word tokens longer than MaxTermBytes (64) bytes whole (not
//     truncated: they are hashes, blobs and minified code).
//  6. Drop English stopwords (see Stopwords), unless Options.NoStopwords.
//  7. Stem words made only of the letters a-z with the Porter algorithm
//     (1980), unless Options.NoStem: "generalization" → gener, "ponies" →
//     poni. Words with digits or other scripts are kept as they are.
//  8. Japanese text — text with hiragana or katakana — is read as words with
//     the IPA dictionary (japanese.go; the dictionary is package ipadic,
//     read in place from the binary, segmented as kagome does): the content
//     words are the terms (nouns as written, verbs and adjectives as their
//     stem, interjections such as こんにちは), a run of katakana is one word
//     (the dictionary's word, else its parts of three characters or more,
//     else its bigrams: ポート does not match インポート), words the
//     dictionary does not know become character bigrams, and particles,
//     auxiliaries and endings make no terms. Other CJK runs (Chinese,
//     Korean) become overlapping character bigrams; a run of one character
//     is a unigram, except a lone hiragana, which is dropped. Stopwords and
//     stemming do not apply to them.
//
// So "VitePressの設定方法を理解する" gives vitepress, 設定, 方法, 理解, and the
// query "設定ファイルを作成する方法" (設定, ファイル, 作成, 方法) matches
// "設定ファイルを作成します" on three of its four terms. Version 1 of the
// analyzer read every CJK run as bigrams (設定, 定方, 方法, 理解, する), and
// version 2 cut katakana words as the dictionary does (インポート: イン, ポート)
// and dropped interjections; both stay available (Options.Version, Parse)
// for indexes pinned to them.
//
// TermsNear gives the terms of a result for a proximity re-rank without the
// dictionary: the query's terms are found in Japanese text as written.
//
// Scripts written without spaces other than CJK (Thai, Lao, Khmer, ...) are
// not segmented: a run of them is one token, dropped if over 64 bytes.
//
// The output is deterministic and depends only on the text, the Options and
// Version; Analyzer.Signature names all three for the index to pin.
package analyze
