// Command sbom writes a CycloneDX 1.5 JSON software bill of materials for a
// Go binary of any platform, from the module list Go records in it (what
// `go version -m` prints): the binary's own module and every dependency
// module with its version, checksum and package URL. The release script
// (scripts/release.sh) runs it for each archive's binary.
//
//	go run ./scripts/sbom -version v1.2.3 dist/sagasu_linux_amd64/sagasu > sbom.cdx.json
package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"
)

type bom struct {
	BOMFormat    string      `json:"bomFormat"`
	SpecVersion  string      `json:"specVersion"`
	SerialNumber string      `json:"serialNumber"`
	Version      int         `json:"version"`
	Metadata     metadata    `json:"metadata"`
	Components   []component `json:"components"`
}

type metadata struct {
	Timestamp  string     `json:"timestamp"`
	Tools      tools      `json:"tools"`
	Component  component  `json:"component"`
	Properties []property `json:"properties,omitempty"`
}

type tools struct {
	Components []component `json:"components"`
}

type component struct {
	Type       string     `json:"type"`
	BOMRef     string     `json:"bom-ref,omitempty"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Hashes     []hash     `json:"hashes,omitempty"`
	Properties []property `json:"properties,omitempty"`
}

type hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func main() {
	version := flag.String("version", "", "version of the binary's own module (default: the one Go recorded)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: sbom [-version V] BINARY")
		os.Exit(2)
	}
	if err := write(os.Stdout, flag.Arg(0), *version, now()); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

// now is SOURCE_DATE_EPOCH when set (reproducible builds), else the clock.
func now() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	return time.Now().UTC()
}

func write(w io.Writer, path, version string, at time.Time) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: no Go build information: %w", path, err)
	}
	b := build(bi, version, sha256.Sum256(data), at)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(b)
}

func purl(path, version string) string {
	if version == "" || version == "(devel)" {
		return "pkg:golang/" + path
	}
	return "pkg:golang/" + path + "@" + version
}

// build makes the document; sum is the binary's SHA-256.
func build(bi *buildinfo.BuildInfo, version string, sum [32]byte, at time.Time) bom {
	if version == "" {
		version = bi.Main.Version
	}
	main := component{Type: "application", BOMRef: purl(bi.Main.Path, version), Name: bi.Main.Path, Version: version,
		PURL: purl(bi.Main.Path, version), Hashes: []hash{{Alg: "SHA-256", Content: hex.EncodeToString(sum[:])}}}
	var props []property
	props = append(props, property{"go.version", bi.GoVersion}, property{"go.path", bi.Path})
	for _, s := range bi.Settings {
		props = append(props, property{"go.build." + s.Key, s.Value})
	}
	// The serial number is derived from the binary, so the same binary
	// always gets the same document identity.
	id := sha256.Sum256(append(sum[:], version...))
	id[6] = id[6]&0x0f | 0x50
	id[8] = id[8]&0x3f | 0x80
	u := hex.EncodeToString(id[:16])
	out := bom{
		BOMFormat: "CycloneDX", SpecVersion: "1.5", Version: 1,
		SerialNumber: "urn:uuid:" + u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:32],
		Metadata: metadata{
			Timestamp:  at.Format(time.RFC3339),
			Tools:      tools{Components: []component{{Type: "application", Name: "sagasu scripts/sbom"}}},
			Component:  main,
			Properties: props,
		},
		Components: []component{},
	}
	for _, d := range bi.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		c := component{Type: "library", BOMRef: purl(m.Path, m.Version), Name: m.Path, Version: m.Version, PURL: purl(m.Path, m.Version)}
		if h := h1(m); h != "" {
			c.Hashes = []hash{{Alg: "SHA-256", Content: h}}
			c.Properties = []property{{"go.sum", m.Sum}}
		}
		if d.Replace != nil {
			c.Properties = append(c.Properties, property{"go.replaces", d.Path + "@" + d.Version})
		}
		out.Components = append(out.Components, c)
	}
	return out
}

// h1 is the module's go.sum hash (the SHA-256 of its file list, "h1:"),
// as hex.
func h1(m *debug.Module) string {
	if len(m.Sum) < 3 || m.Sum[:3] != "h1:" {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(m.Sum[3:])
	if err != nil {
		return ""
	}
	return hex.EncodeToString(b)
}
