#!/usr/bin/env bash
# Build the release archives into dist/: sagasu for linux, darwin and
# windows on amd64 and arm64 (static, CGO off), each as a .tar.gz (.zip for
# windows) with the README, a CycloneDX SBOM per binary made from the
# module list Go records in it (scripts/sbom), and checksums.txt (SHA-256)
# over everything. `make release-snapshot` runs it; VERSION names the
# release (default: git describe). Archives are reproducible for a given
# commit: file times are the commit's time and owners are 0.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
TARGETS=${TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
DIST=dist

rm -rf "$DIST"
mkdir -p "$DIST"
$GO build -o "$DIST/.sbom" ./scripts/sbom
for t in $TARGETS; do
	os=${t%/*} arch=${t#*/}
	name="sagasu_${VERSION#v}_${os}_${arch}"
	dir="$DIST/$name"
	exe=sagasu
	[ "$os" = windows ] && exe=sagasu.exe
	mkdir -p "$dir"
	echo "build $name"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch $GO build -trimpath -buildvcs=false \
		-ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT" -o "$dir/$exe" ./cmd/sagasu
	cp README.md "$dir/"
	"$DIST/.sbom" -version "$VERSION" "$dir/$exe" > "$DIST/$name.sbom.cdx.json"
	touch -d "@$SOURCE_DATE_EPOCH" "$dir" "$dir"/*
	if [ "$os" = windows ]; then
		(cd "$DIST" && rm -f "$name.zip" && zip -q -X -r "$name.zip" "$name")
	else
		tar -C "$DIST" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
			-czf "$DIST/$name.tar.gz" "$name"
	fi
	rm -rf "$dir"
done
rm -f "$DIST/.sbom"
(cd "$DIST" && sha256sum -- *.tar.gz *.zip *.sbom.cdx.json > checksums.txt)
echo "dist/ for sagasu $VERSION ($COMMIT):"
ls -l "$DIST"
