"""``java_double_str`` against the real ``Double.toString``, double for double.

One JVM per Java found (the ``java`` on PATH, ``$JAVA_HOME``, ``/usr/lib/jvm/*``) reads the raw bits of a seeded
corpus of ~130,000 doubles (random bit patterns, subnormals, powers of 10 and 2 and their neighbours, integers
below and beyond 2**53 and 2**63, the 1e-3 and 1e7 format switches, short decimals, widened floats, the special
values) and prints ``Double.toString`` of each. Java 8..18 must print exactly :func:`java_double_str`, Java 19+
exactly :func:`java_double_str_shortest`. ``SARG_DOUBLE_SEED`` explores other corpora.
"""

from __future__ import annotations

import functools
import glob
import math
import os
import random
import shutil
import struct
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from sarg import javadouble
from sarg.javadouble import _dtoa_steps, java_format, jdk17_digits, shortest_digits
from sarg.literals import java_double_str, java_double_str_shortest

SEED = int(os.environ.get("SARG_DOUBLE_SEED", "20261122"))
MAIN_CLASS = "DoubleToStringOracle"
JAVA_SOURCE = """
import java.io.*;

/** Reads doubles as hex raw long bits, one a line; prints the Java version, then Double.toString of each. */
public final class DoubleToStringOracle {
  public static void main(String[] args) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "US-ASCII"), 1 << 16);
    Writer out = new BufferedWriter(new OutputStreamWriter(System.out, "US-ASCII"), 1 << 16);
    out.write(System.getProperty("java.specification.version"));
    out.write('\\n');
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      out.write(Double.toString(Double.longBitsToDouble(Long.parseUnsignedLong(line, 16))));
      out.write('\\n');
    }
    out.flush();
  }
}
"""

_pack_d, _unpack_q = struct.Struct("<d").pack, struct.Struct("<Q").unpack
_pack_q, _unpack_d = struct.Struct("<Q").pack, struct.Struct("<d").unpack
_pack_f, _unpack_f = struct.Struct("<f").pack, struct.Struct("<f").unpack
_pack_i = struct.Struct("<I").pack


def bits_of(x: float) -> int:
    return int(_unpack_q(_pack_d(x))[0])


def from_bits(bits: int) -> float:
    return float(_unpack_d(_pack_q(bits & 0xFFFF_FFFF_FFFF_FFFF))[0])


def _around(bits: int, steps: int) -> list[int]:
    """bits and its `steps` neighbours (nextafter) on each side, within the positive finite doubles."""
    return [b for b in range(bits - steps, bits + steps + 1) if 0 <= b < 0x7FF0_0000_0000_0000]


@functools.cache
def corpus(seed: int = SEED) -> tuple[int, ...]:
    """The raw bits of the compared doubles (deterministic for a seed); each also negated, except NaNs."""
    rnd = random.Random(seed)
    out: list[int] = []
    # the special values and the ends of the ranges
    out += [0, bits_of(math.inf), 0x7FF8_0000_0000_0000, 0x7FF0_0000_0000_0001, 0xFFFF_FFFF_FFFF_FFFF]
    out += _around(1, 0) + _around(2, 0) + _around(3, 0)  # Double.MIN_VALUE, 1.0E-323, 1.5E-323
    out += _around(bits_of(2.2250738585072014e-308), 40)  # MIN_NORMAL: the subnormal edge
    out += _around(bits_of(1.7976931348623157e308), 40)  # MAX_VALUE and below
    # random bit patterns over the whole range (a few are NaNs with payloads)
    out += [rnd.getrandbits(64) for _ in range(30_000)]
    # subnormals: random fractions of every length, the first few hundred multiples of MIN_VALUE
    out += [rnd.getrandbits(rnd.randint(1, 52)) | 1 for _ in range(8_000)]
    out += list(range(1, 400))
    # powers of 10 and d * 10**e, with neighbours
    for e in range(-324, 309):
        out += _around(bits_of(float(f"1e{e}")), 3)
        for d in range(2, 10):
            out += _around(bits_of(float(f"{d}e{e}")), 1)
    # powers of 2 with neighbours
    for e in range(-1074, 1024):
        out += _around(bits_of(math.ldexp(1.0, e)), 2)
    # integers: below 2**53 (exact), beyond it up to 2**80 (rounded), and around 2**53, 2**58, 2**62, 2**63
    out += [bits_of(float(rnd.getrandbits(rnd.randint(1, 53)) or 1)) for _ in range(10_000)]
    out += [bits_of(float(rnd.getrandbits(rnd.randint(54, 80)))) for _ in range(6_000)]
    for p in (53, 54, 58, 59, 62, 63, 64):
        out += _around(bits_of(math.ldexp(1.0, p)), 300)
    out += [bits_of(float(n)) for n in range(1, 3_000)]
    # where the format switches: 1e-3 and 1e7, dense neighbourhoods and random values close by
    for edge in (1e-3, 1e7):
        out += _around(bits_of(edge), 2_000)
        out += [bits_of(edge * (1 + rnd.uniform(-1e-6, 1e-6))) for _ in range(2_000)]
    # short decimals (typical literals) and decimals of every length up to 17 digits
    for _ in range(20_000):
        ndigits = rnd.randint(1, 17)
        mantissa = rnd.randrange(10 ** (ndigits - 1), 10**ndigits)
        x = float(f"{mantissa}e{rnd.randint(-330, 310) if rnd.random() < 0.3 else rnd.randint(-12, 12)}")
        if 0.0 < x < math.inf:
            out.append(bits_of(x))
    # widened floats: random float32 bits and floats of short decimals, e.g. (double) 0.1f
    for _ in range(6_000):
        f = float(_unpack_f(_pack_i(rnd.getrandbits(31)))[0])
        if math.isfinite(f):
            out.append(bits_of(f))
    for _ in range(4_000):
        f = float(_unpack_f(_pack_f(float(f"{rnd.randint(1, 99999)}e{rnd.randint(-8, 8)}")))[0])
        out.append(bits_of(f))
    # doubles next to an exact midpoint between two doubles that is a short decimal (2e23 and 1e23 are such):
    # the stop tests' boundaries, where Java 8..18 and the shortest digits part most often
    for p in range(-1, 24):
        lo_c = -(-(2**53) // 5**p) if p >= 0 else 2**53
        hi_c = (2**54 - 1) // 5**p + 1 if p >= 0 else 2**54
        for _ in range(40):
            c = rnd.randrange(lo_c, hi_c) | 1  # odd, c * 5**p has 54 bits: a midpoint
            mantissa = c * 5 if p < 0 else c
            for _ in range(8):
                if mantissa >= 10**17:
                    break
                out += _around(bits_of(float(Fraction(mantissa) * Fraction(10) ** p)), 1)
                mantissa <<= 1
    # plain random values
    out += [bits_of(rnd.random()) for _ in range(3_000)]
    out += [bits_of(abs(rnd.gauss(0, 1)) * 10.0 ** rnd.randint(-10, 10) or 1.0) for _ in range(3_000)]
    # the same with the sign bit: the special values and every 8th of the others
    signed = [b | (1 << 63) for i, b in enumerate(out) if i < 100 or (i % 8 == 0 and b >> 52 != 0x7FF)]
    return (*out, *signed)


def _javas(path_java: str | None) -> list[str]:
    """Every distinct java executable at hand: PATH's, $JAVA_HOME's, /usr/lib/jvm/*'s."""
    found = [path_java] if path_java else []
    if os.environ.get("JAVA_HOME"):
        found.append(os.path.join(os.environ["JAVA_HOME"], "bin", "java"))
    found += sorted(glob.glob("/usr/lib/jvm/*/bin/java"))
    seen: dict[str, str] = {}
    for j in found:
        if os.access(j, os.X_OK):
            seen.setdefault(os.path.realpath(j), j)
    return list(seen.values())


_RESULTS: dict[str, tuple[int, list[str]]] = {}


@pytest.fixture(scope="module")
def java_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[str, list[str]]]:
    """{Java feature version: (java path, Double.toString of every corpus double)}, one JVM each."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac not on PATH")
    work: Path = tmp_path_factory.mktemp("double_oracle")
    (work / f"{MAIN_CLASS}.java").write_text(JAVA_SOURCE, encoding="utf-8")
    subprocess.run([javac, "--release", "8", "-nowarn", "-d", str(work), str(work / f"{MAIN_CLASS}.java")],
                   check=True, capture_output=True, timeout=300)
    stdin = "".join(f"{b:x}\n" for b in corpus())
    runs: dict[int, tuple[str, list[str]]] = {}
    for java in _javas(shutil.which("java")):
        proc = subprocess.run([java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", str(work), MAIN_CLASS],
                              input=stdin, capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            continue  # a JRE too old for --release 8 classes, or a broken install
        version, *lines = proc.stdout.splitlines()
        feature = int(version.split(".")[1] if version.startswith("1.") else version)
        runs.setdefault(feature, (java, lines))
    if not runs:
        pytest.skip("no working java")
    return runs


def _compare(lines: list[str], printer: object) -> tuple[int, list[str]]:
    assert callable(printer)
    bits = corpus()
    assert len(lines) == len(bits)
    diffs = []
    for b, java in zip(bits, lines, strict=True):
        ours = printer(from_bits(b))
        if ours != java:
            diffs.append(f"{b:#018x}: java {java!r}, ours {ours!r}")
    return len(bits), diffs


def test_corpus_is_large_and_covers_the_edges() -> None:
    bits = corpus()
    values = [from_bits(b) for b in bits]
    assert len(bits) >= 100_000
    assert len(set(bits)) >= 100_000
    finite = [abs(v) for v in values if math.isfinite(v)]
    assert sum(1 for v in finite if 0 < v < 2.2250738585072014e-308) >= 5_000  # subnormals
    assert sum(1 for v in finite if 1e-3 * 0.999 <= v <= 1e-3 * 1.001) >= 2_000
    assert sum(1 for v in finite if 1e7 * 0.999 <= v <= 1e7 * 1.001) >= 2_000
    assert sum(1 for v in finite if v == int(v) and v >= 2.0**53) >= 5_000
    assert {5e-324, 1.7976931348623157e308, 0.0, 1e23, 2e23} <= set(finite)
    assert any(math.isnan(v) for v in values) and math.inf in values and -math.inf in values
    assert -0.0 in values and any(math.copysign(1, v) < 0 for v in values if v == 0)


@pytest.mark.java
def test_java_double_str_is_java_8_to_18s_double_to_string(java_runs: dict[int, tuple[str, list[str]]]) -> None:
    old = {v: r for v, r in java_runs.items() if v <= 18}
    if not old:
        pytest.skip(f"no Java 8..18 at hand (found {sorted(java_runs)})")
    for version, (java, lines) in old.items():
        count, diffs = _compare(lines, java_double_str)
        assert not diffs, f"Java {version} ({java}): {len(diffs)} of {count} differ:\n" + "\n".join(diffs[:20])
        # the corpus does exercise the old algorithm's extra digits (0.3% of random bit patterns, and most of
        # those next to a midpoint that is a short decimal)
        longer = sum(1 for b, line in zip(corpus(), lines, strict=True)
                     if line != java_double_str_shortest(from_bits(b)))
        assert longer >= 10_000, longer


@pytest.mark.java
def test_java_double_str_shortest_is_java_19_plus_double_to_string(
        java_runs: dict[int, tuple[str, list[str]]]) -> None:
    new = {v: r for v, r in java_runs.items() if v >= 19}
    if not new:
        pytest.skip(f"no Java 19+ at hand (found {sorted(java_runs)})")
    for version, (java, lines) in new.items():
        count, diffs = _compare(lines, java_double_str_shortest)
        assert not diffs, f"Java {version} ({java}): {len(diffs)} of {count} differ:\n" + "\n".join(diffs[:20])


@pytest.mark.java
def test_step_by_step_emulation_is_java_8_to_18s(java_runs: dict[int, tuple[str, list[str]]]) -> None:
    """_dtoa_steps, FloatingDecimal's digit loop step by step (what jdk17_digits falls back to where Java's
    int/long arithmetic wraps around), on every 4th double and on every fallback."""
    old = {v: r for v, r in java_runs.items() if v <= 18}
    if not old:
        pytest.skip(f"no Java 8..18 at hand (found {sorted(java_runs)})")
    _java, lines = next(iter(old.values()))
    calls: list[float] = []
    real = javadouble._dtoa_steps

    def spy(mag: float) -> tuple[str, int]:
        calls.append(mag)
        return real(mag)

    sample = [(from_bits(b), java) for b, java in zip(corpus()[::4], lines[::4], strict=True)]
    javadouble._dtoa_steps = spy
    try:
        for x, java in sample:
            assert java_double_str(x) == java
    finally:
        javadouble._dtoa_steps = real
    assert len(calls) >= 20, "the corpus hardly takes the wrap-around fallback"
    checked = 0
    for x, java in sample:
        if math.isfinite(x) and x != 0.0:
            assert java_format(x < 0, *_dtoa_steps(abs(x))) == java, x.hex()
            checked += 1
    assert checked >= 25_000


@pytest.mark.parametrize(("value", "java17", "java19"), [
    (2e23, "1.9999999999999998E23", "2.0E23"),
    (1e23, "9.999999999999999E22", "1.0E23"),
    (5e-324, "4.9E-324", "4.9E-324"),
    (1e-323, "1.0E-323", "9.9E-324"),
    (1.7976931348623157e308, "1.7976931348623157E308", "1.7976931348623157E308"),
    (2.2250738585072014e-308, "2.2250738585072014E-308", "2.2250738585072014E-308"),
    (2.0**62, "4.6116860184273879E18", "4.611686018427388E18"),
    (2.0**53, "9.007199254740992E15", "9.007199254740992E15"),
    (1e7, "1.0E7", "1.0E7"),
    (9999999.999999998, "9999999.999999998", "9999999.999999998"),
    (1e-3, "0.001", "0.001"),
    (0.0009999999999999998, "9.999999999999998E-4", "9.999999999999998E-4"),
    (1e-5, "1.0E-5", "1.0E-5"),
    (0.1, "0.1", "0.1"),
    (-273.15, "-273.15", "-273.15"),
    (100.0, "100.0", "100.0"),
    (0.0, "0.0", "0.0"),
    (-0.0, "-0.0", "-0.0"),
    (math.nan, "NaN", "NaN"),
    (math.inf, "Infinity", "Infinity"),
    (-math.inf, "-Infinity", "-Infinity"),
])
def test_known_prints(value: float, java17: str, java19: str) -> None:
    """Values checked by hand against OpenJDK 17.0.15 and Temurin 25."""
    assert java_double_str(value) == java17
    assert java_double_str_shortest(value) == java19


def test_digit_helpers() -> None:
    assert jdk17_digits(2e23) == ("19999999999999998", 24)
    assert jdk17_digits(1e-5) == ("10", -4)
    assert shortest_digits(2e23) == ("2", 24)
    assert shortest_digits(5e-324) == ("49", -323)
