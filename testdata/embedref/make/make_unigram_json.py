"""Build an XLM-R style tokenizer.json (as the converters of transformers 4
wrote for xlm-roberta and multilingual-e5) from a trained SentencePiece
unigram model."""
import sys
from tokenizers import Tokenizer, AddedToken, normalizers, pre_tokenizers, processors, decoders, Regex
from tokenizers.models import Unigram
from sentencepiece import sentencepiece_model_pb2 as pb

m = pb.ModelProto(); m.ParseFromString(open(sys.argv[1], "rb").read())
vocab = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
vocab += [(p.piece, p.score) for p in m.pieces[3:]]
vocab += [("<mask>", 0.0)]
tok = Tokenizer(Unigram(vocab, unk_id=3, byte_fallback=False))
tok.normalizer = normalizers.Sequence([normalizers.Precompiled(m.normalizer_spec.precompiled_charsmap),
                                       normalizers.Replace(Regex(" {2,}"), " ")])
tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                             pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")])
tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
                                                   special_tokens=[("<s>", 0), ("</s>", 2)])
tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
tok.add_special_tokens([AddedToken("<s>", normalized=False), AddedToken("<pad>", normalized=False),
                        AddedToken("</s>", normalized=False), AddedToken("<unk>", normalized=False),
                        AddedToken("<mask>", lstrip=True, normalized=False)])
tok.save(sys.argv[2])
