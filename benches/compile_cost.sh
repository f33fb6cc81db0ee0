#!/usr/bin/env bash
# Compile cost of `#[differentiable]` (issue 3). Not run in CI.
#
# Part 1, expansion size: the macro's output for every annotated function
# at the top level of a module of the integration tests (`tests/it`, one
# block per module), of the other tracked test files and examples that use
# it (and of the generated crate of part 2), in tokens, relative to the
# function as written. The expansion is rustc's own `-Zunpretty=expanded`
# output (what cargo-expand prints), which needs `RUSTC_BOOTSTRAP=1` on a
# stable toolchain; it is used here as a measuring tool only, nothing is
# built with it. Per function, the generated items are
# `__nabla_<f>_{primal,forward,jvp,vjp,grad,value_and_grad,vjp_entry,
# jvp_entry}`, `const <f>`, `mod <f>` and the `impl`s for
# `<f>::Function`, after full expansion (derives, `format_args!`, ...); the
# source size is the `primal` item (the body as written, so both sides are
# counted by the same tokenizer on the same pretty-printer's output).
#
# Part 2, compile time and size: three throw-away crates in $WORK that
# depend on nabla by path, each with the same N generated functions
# (3 array inputs, 15 operations each) and one #[test] that calls them:
#   plain     plain `fn`s, called
#   macro     the same fns with `#[differentiable]`, called plainly
#   grad      `#[differentiable]`, called, plus `grad!(f, argnums = (0, 1))`
#             of each (what a user of the macro compiles)
# For each: `cargo build --tests` (dev profile, CARGO_INCREMENTAL=0, -j1) of
# the crate alone after its dependencies are built, best wall time of
# $REPS builds, CPU time of that build, and the size of the test binary and
# of the rlib (`cargo build --lib`). Per-function cost = (variant − plain) / N.
#
# Usage: benches/compile_cost.sh
# Environment:
#   N      functions per generated crate (default 20)
#   REPS   timed builds per variant (default 3)
#   WORK   directory for the generated crates (default /tmp/nabla-compile-cost)
#   TARGET target directory (default <repo>/target/compile-cost: inside the
#          shared target dir but separate from target/debug and
#          target/release, so these builds never invalidate or lock them)
#   ROOT   the nabla checkout (default: the one holding this script)
#   SKIP_EXPANSION=1 / SKIP_BUILD=1 to run one part only
# Takes ~5 min (-j1), most of it building nabla's dependencies once in
# check and dev mode under TARGET.
set -euo pipefail

root="${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
n="${N:-20}"
reps="${REPS:-3}"
work="${WORK:-/tmp/nabla-compile-cost}"
export CARGO_TARGET_DIR="${TARGET:-$root/target/compile-cost}"
export CARGO_INCREMENTAL=0
offline=(--offline)
cargo "${offline[@]}" metadata --format-version 1 --manifest-path "$root/Cargo.toml" >/dev/null 2>&1 || offline=()
mkdir -p "$work"

# ---------------------------------------------------------------------------
# Token counting and per-function attribution (python3).
analyse() { # analyse LABEL EXPANDED_FILE
    python3 - "$@" <<'PY'
import re, sys
label, expanded = sys.argv[1:3]
TOK = re.compile(r"""
    r\#*"(?:[^"\\]|\\.)*"\#* | b?"(?:[^"\\]|\\.)*" | b?'(?:[^'\\]|\\.)' |
    '[A-Za-z_]\w*(?!') | [A-Za-z_]\w* | \d[\w.]* |
    ::|->|=>|==|!=|<=|>=|&&|\|\||\+=|-=|\*=|/=|\.\.=|\.\.|\S
""", re.X | re.S)  # re.S: a `\` line continuation inside a string

def tokens(text):
    return TOK.findall(text)

def items(toks):
    """Top-level items: runs of tokens ending with `;` or `}` at depth 0."""
    out, cur, depth = [], [], 0
    for t in toks:
        cur.append(t)
        if t in "([{" and len(t) == 1:
            depth += 1
        elif t in ")]}" and len(t) == 1:
            depth -= 1
        if depth == 0 and t in (";", "}"):
            out.append(cur)
            cur = []
    return out

def strip_attrs(it):
    i = 0
    while i < len(it) and it[i] == "#":
        j, d = i + 1, 0
        if j < len(it) and it[j] == "!":
            j += 1
        while j < len(it):
            d += it[j] == "["
            d -= it[j] == "]"
            j += 1
            if d == 0:
                break
        i = j
    return it[i:]

def name_of(it):
    it = strip_attrs(it)
    for kw in ("fn", "const", "mod", "static", "struct"):
        if kw in it[:6]:
            k = it.index(kw)
            return kw, it[k + 1]
    if "impl" in it[:3]:
        body = it.index("{") if "{" in it else len(it)
        head = it[:body]
        if "for" in head:
            k = len(head) - 1 - head[::-1].index("for")
            return "impl", "".join(head[k + 1:]).split("where")[0]
    return None, None

suffixes = ("primal", "forward", "jvp", "vjp", "grad", "value_and_grad", "vjp_entry", "jvp_entry")

def annotated(its):
    """Every annotated function has exactly one `__nabla_<f>_primal` (also
    those that a `macro_rules!` defines), beside its other generated items."""
    names = []
    for it in its:
        kind, nm = name_of(it)
        m = re.fullmatch(r"__nabla_(\w+)_primal", nm or "")
        if kind == "fn" and m:
            names.append(m.group(1))
    return names

def units(label, its):
    """The crate root and each module written in the source (e.g. the
    modules of the `tests/it` binary), each with its own items; the
    generated `mod <f>` of an annotated function is not one."""
    yield label, its
    generated = set(annotated(its))
    for it in its:
        kind, nm = name_of(it)
        if kind != "mod" or nm in generated:
            continue
        body = strip_attrs(it)
        k = body.index("mod")
        if body[k + 2:k + 3] == ["{"]:
            yield from units(f"{label}/{nm}", items(body[k + 3:-1]))

def rows_of(its):
    rows = []
    for f in annotated(its):
        gen = prim = 0
        for it in its:
            kind, nm = name_of(it)
            if kind is None:
                continue
            mine = (kind == "fn" and nm in {f"__nabla_{f}_{s}" for s in suffixes}) or \
                   (kind in ("const", "mod") and nm == f) or \
                   (kind == "impl" and nm == f"{f}::Function")
            if mine:
                gen += len(it)
                if nm == f"__nabla_{f}_primal":
                    prim = len(strip_attrs(it))
        if prim:
            rows.append((f, prim, gen))
    return rows

# The pretty-printer keeps inner doc comments (`//! ..`, at the top of each
# module) as comments: drop them, or they would join the module's first item.
text = re.sub(r"(?m)^[ \t]*//.*$", "", open(expanded).read())
found = [(u, rows_of(its)) for u, its in units(label, items(tokens(text)))]
found = [(u, rows) for u, rows in found if rows] or found[:1]
for label, rows in found:
    print(f"## expansion: {label} ({len(rows)} annotated functions)")
    print(f"{'function':<28} {'source':>7} {'generated':>9} {'ratio':>6}")
    for f, p, g in rows:
        print(f"{f:<28} {p:>7} {g:>9} {g / p:>6.1f}")
    if rows:
        sp, sg = sum(r[1] for r in rows), sum(r[2] for r in rows)
        ratios = sorted(g / p for _, p, g in rows)
        print(f"{'total':<28} {sp:>7} {sg:>9} {sg / sp:>6.1f}   "
              f"(per function: median {ratios[len(ratios) // 2]:.1f}x, range {ratios[0]:.1f}-{ratios[-1]:.1f}x; "
              f"{sg / len(rows):.0f} tokens generated per function)")
    print()
PY
}

expand_to() { # expand_to OUT (cargo rustc target args...) -- run in the crate dir
    local out="$1"
    shift
    RUSTC_BOOTSTRAP=1 cargo rustc "${offline[@]}" -q -j1 --profile=check "$@" -- -Zunpretty=expanded >"$out"
}

# ---------------------------------------------------------------------------
# The generated crates.
gen_crate() { # gen_crate NAME VARIANT(plain|macro|grad)
    local dir="$work/$1" variant="$2"
    mkdir -p "$dir/src"
    cp "$root/Cargo.lock" "$dir/Cargo.lock"
    cat >"$dir/Cargo.toml" <<EOF
[package]
name = "cc_$1"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
nabla = { path = "$root" }

[workspace]

# As in nabla's own workspace: dependencies optimised in dev builds.
[profile.dev.package."*"]
opt-level = 2
EOF
    local unary=(tanh sin cos exp sigmoid square)
    {
        echo "//! $n generated functions ($variant); see benches/compile_cost.sh."
        echo "#![allow(dead_code)]"
        echo "use nabla::prelude::*;"
        for ((i = 0; i < n; i++)); do
            local u1=${unary[i % 6]} u2=${unary[(i + 1) % 6]} u3=${unary[(i + 3) % 6]}
            echo
            [ "$variant" != plain ] && echo "#[differentiable]"
            cat <<EOF
pub fn f$i(w: &Array, b: &Array, x: &Array) -> Array {
    let h = (x.matmul(w) + b).$u1();
    let g = h.$u2() * 0.$((i + 1)) + &h * &h;
    let e = (g - 0.$((i + 3))).$u3() / (h.square() + 1.0);
    nabla::mean(&(e * x.matmul(w)))
}
EOF
        done
        echo
        echo "#[test]"
        echo "fn run_all() {"
        echo "    nabla::manual_seed(0);"
        echo "    let w = nabla::randn(&[3, 3], DType::F64);"
        echo "    let b = nabla::randn(&[3], DType::F64);"
        echo "    let x = nabla::randn(&[4, 3], DType::F64);"
        echo "    let mut acc = 0.0;"
        for ((i = 0; i < n; i++)); do
            echo "    acc += f$i(&w, &b, &x).item();"
            if [ "$variant" = grad ]; then
                echo "    let (gw, gb) = nabla::grad!(f$i, argnums = (0, 1))(&w, &b, &x);"
                echo "    acc += gw.sum().item() + gb.sum().item();"
            fi
        done
        echo "    assert!(acc.is_finite());"
        echo "}"
    } >"$dir/src/lib.rs"
}

for v in plain macro grad; do
    gen_crate "$v" "$v"
done

# ---------------------------------------------------------------------------
if [ "${SKIP_EXPANSION:-}" != 1 ]; then
    echo "# Part 1: expansion size (tokens of rustc's -Zunpretty=expanded output)"
    echo
    exp="$work/expanded"
    mkdir -p "$exp"
    ok=1
    # The integration-test binary `tests/it` (one block per module with
    # annotated functions), and the other tracked test files and examples
    # (top level) that use the macro.
    for f in tests/it $(cd "$root" && git ls-files 'tests/*.rs' 'examples/*.rs' |
        grep -E '^(tests|examples)/[^/]+\.rs$' | xargs grep -l 'differentiable\]'); do
        t=$(basename "$f" .rs)
        kind=--test
        [[ "$f" == examples/* ]] && kind=--example
        if (cd "$root" && expand_to "$exp/$t.rs" "$kind" "$t") 2>"$exp/$t.err"; then
            analyse "$f" "$exp/$t.rs"
        else
            echo "expansion of $f failed (see $exp/$t.err)"
            ok=0
        fi
    done
    for v in plain macro; do
        (cd "$work/$v" && expand_to "$exp/gen_$v.rs" --lib) 2>"$exp/gen_$v.err" || ok=0
    done
    if [ -s "$exp/gen_macro.rs" ]; then
        analyse "generated crate, $n functions" "$exp/gen_macro.rs"
        python3 - "$exp/gen_plain.rs" "$exp/gen_macro.rs" "$n" <<'PY'
import re, sys
tok = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|::|->|=>|\S")
a, b = (len(tok.findall(open(p).read())) for p in sys.argv[1:3])
n = int(sys.argv[3])
print(f"whole generated crate, expanded: plain {a} tokens, annotated {b} tokens: "
      f"+{(b - a) / n:.0f} tokens per function ({b / a:.1f}x the plain crate)\n")
PY
    fi
    [ "$ok" = 1 ] || echo "(some expansions failed; RUSTC_BOOTSTRAP=1 -Zunpretty=expanded may be unavailable)"
fi

# ---------------------------------------------------------------------------
if [ "${SKIP_BUILD:-}" != 1 ]; then
    echo "# Part 2: compile time and size, $n functions, dev profile, -j1, best of $reps"
    echo
    for v in plain macro grad; do # build the dependencies once, check the tests pass
        (cd "$work/$v" && cargo "${offline[@]}" test -q -j1 >/dev/null 2>"$work/$v.err") ||
            { echo "cc_$v failed to build or test, see $work/$v.err"; exit 1; }
    done
    printf '%-8s %10s %10s %12s %12s %12s\n' variant "tests wall" "tests cpu" "test binary" ".text" "rlib"
    declare -A wall cpu bin text rlib
    for v in plain macro grad; do
        best=""
        for ((r = 0; r < reps; r++)); do
            touch "$work/$v/src/lib.rs"
            /usr/bin/time -o "$work/time.txt" -f '%e %U %S' cargo "${offline[@]}" build -q -j1 --tests \
                --manifest-path "$work/$v/Cargo.toml" >/dev/null
            read -r e u s <"$work/time.txt"
            if [ -z "$best" ] || awk "BEGIN{exit !($e < $best)}"; then
                best=$e
                cpu[$v]=$(awk "BEGIN{print $u + $s}")
            fi
        done
        wall[$v]=$best
        exe=$(cargo "${offline[@]}" build -q -j1 --tests --message-format=json \
            --manifest-path "$work/$v/Cargo.toml" 2>/dev/null |
            python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"].startswith("cc_"):
        print(m["executable"])')
        bin[$v]=$(stat -c %s "$exe")
        text[$v]=$(size -A "$exe" | awk '$1 == ".text" {print $2}')
        cargo "${offline[@]}" build -q -j1 --lib --manifest-path "$work/$v/Cargo.toml"
        rlib[$v]=$(stat -c %s "$CARGO_TARGET_DIR/debug/libcc_$v.rlib")
        printf '%-8s %9.2fs %9.2fs %12d %12d %12d\n' "$v" "${wall[$v]}" "${cpu[$v]}" "${bin[$v]}" "${text[$v]}" "${rlib[$v]}"
    done
    echo
    for v in macro grad; do
        awk -v v="$v" -v n="$n" -v w1="${wall[$v]}" -v w0="${wall[plain]}" -v c1="${cpu[$v]}" -v c0="${cpu[plain]}" \
            -v b1="${bin[$v]}" -v b0="${bin[plain]}" -v t1="${text[$v]}" -v t0="${text[plain]}" \
            -v r1="${rlib[$v]}" -v r0="${rlib[plain]}" 'BEGIN {
            printf "%-6s vs plain, per function: %+.0f ms wall, %+.0f ms cpu, test binary %+.1f KiB (.text %+.1f KiB), rlib %+.1f KiB\n",
                v, (w1 - w0) / n * 1000, (c1 - c0) / n * 1000, (b1 - b0) / n / 1024, (t1 - t0) / n / 1024, (r1 - r0) / n / 1024 }'
    done
fi
