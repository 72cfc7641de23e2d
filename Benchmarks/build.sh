# Sourced by Benchmarks/run, Benchmarks/instructions and Benchmarks/pool-instructions: `build_release [swift build arguments]` builds
# the benchmarks in release mode, its output in results/build.log. A first release build after a change
# of the root package has, a few times, stopped without finishing; so a failed build is run once more
# (the failed one's output kept in results/build-failed.log), and only a second failure stops the script.
# The build plan is made anew each time (--disable-build-manifest-caching): a cached one misses files
# added to the root package since, and the build then fails not finding their types.
build_release() {
    mkdir -p "$here/results"
    swift build -c release --disable-build-manifest-caching --package-path "$here" "$@" >"$here/results/build.log" 2>&1 && return
    mv "$here/results/build.log" "$here/results/build-failed.log"
    say "the release build stopped (see Benchmarks/results/build-failed.log); building again"
    swift build -c release --disable-build-manifest-caching --package-path "$here" "$@" >"$here/results/build.log" 2>&1 && return
    tail -30 "$here/results/build.log" >&2
    exit 1
}

# `copy_for_valgrind PRODUCT DIR`: copies the release build of PRODUCT to DIR and Swift's runtime libraries
# to DIR/lib, without their debug info (valgrind 3.19 stops at the toolchain's DWARF 5); run the copy with
# LD_LIBRARY_PATH=DIR/lib.
copy_for_valgrind() {
    mkdir -p "$2/lib"
    strip --strip-debug -o "$2/$1" "$(swift build -c release --package-path "$here" --show-bin-path)/$1"
    local runtime lib
    runtime="$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux"
    for lib in "$runtime"/*.so; do strip --strip-debug -o "$2/lib/$(basename "$lib")" "$lib"; done
}
