package analyze_test

import (
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/analyze"
)

func ExampleAnalyzer_Terms() {
	a := analyze.New(analyze.Options{})
	fmt.Println(a.Terms("The user's COVID-19 generalizations don't hold."))
	fmt.Println(a.Terms("VitePressの設定方法を理解する"))
	// Output:
	// [user covid 19 gener do hold]
	// [vitepress 設定 方法 理解]
}

func ExampleAnalyzer_QueryTerms() {
	a := analyze.New(analyze.Options{})
	fmt.Println(a.QueryTerms("search engines: searching the search index"))
	// Output:
	// [search engin index]
}
