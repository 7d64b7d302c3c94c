"""Java's ``Double.toString`` digits, both algorithms Hive deployments meet.

* Java 8 to 18 (``BinaryToASCIIBuffer.dtoa`` of ``sun.misc.FloatingDecimal`` in Java 8,
  ``jdk.internal.math.FloatingDecimal`` in 9 to 18): Steele & White style digit generation with a symmetric
  half-ULP stop test (narrowed at powers of two), an estimated decimal exponent, machine-integer fast paths
  whose ``int``/``long`` wrap-around changes the outcome, exact digits for integral doubles below 2^63
  (rounded at a fixed digit count from 2^58 up), and at least two digits in E-form. For about 0.3% of doubles
  it prints more digits than needed (``2e23`` prints ``1.9999999999999998E23``, ``1e23`` prints
  ``9.999999999999999E22``; their shortest decimal is the exact midpoint to a neighbour, outside the open
  stop test). :func:`jdk17_digits` computes the same digits, Python's ints standing in for ``int``, ``long``
  and ``FDBigInteger``; :func:`_dtoa_steps` is the step-by-step transcription it falls back to where Java's
  arithmetic wraps around.
* Java 19+ (JDK-4511638, Raffaello Giulietti's ``DoubleToDecimal``): the shortest decimal that rounds back,
  the closest one to the double if several, and, when one digit would do, the closest of one or two digits
  (``Double.MIN_VALUE`` prints ``4.9E-324``, twice it ``9.9E-324``). :func:`shortest_digits`.

Both return ``(digits, exponent)`` with the value ``0.DIGITS * 10**exponent``; :func:`java_format` lays them out
as ``Double.toString`` does (plain for exponents -2..7, i.e. 1e-3 <= |x| < 1e7, else ``d.dddE±n``).
tests/sarg/test_literals_java_double.py compares both with the real Javas, double for double.
"""

from __future__ import annotations

import math
import struct

__all__ = ["java_format", "jdk17_digits", "shortest_digits"]

_EXP_SHIFT = 52
_FRACT_HOB = 1 << _EXP_SHIFT
_SIGNIF_MASK = _FRACT_HOB - 1

# ceil(log2(5**i)) as FloatingDecimal's N_5_BITS tabulates it (27 entries), and
# insignificantDigitsForPow2's table: the number of decimal digits of 2**i minus one (for 1 < i < 64).
_N_5_BITS = (0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56,
             59, 61)
_INSIGNIFICANT_FOR_POW2 = (
    0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9, 9,
    10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 17, 17, 17,
    18, 18, 18, 19)
_POW5 = tuple(5**i for i in range(400))
_POW10 = tuple(10**i for i in range(64))
_DIGIT_CHARS = "0123456789"
_TWO_M52 = 2.0**-52
_pack_double = struct.Struct("<d").pack
_unpack_bits = struct.Struct("<Q").unpack


def _wrap(x: int, bits: int) -> int:
    """Java's two's-complement wrap-around of an ``int`` (bits=32) or ``long`` (bits=64) result."""
    half = 1 << (bits - 1)
    return ((x + half) & ((half << 1) - 1)) - half


# The hard case set up (see _setup): the value is b/s * 10**dec_exp, m is half its ULP scaled like b (narrowed
# at a power of two); width 32 or 64 when Java runs the digit loop in int or long arithmetic, 0 for
# FDBigInteger (exact, and its round-up test is ``b + m >= 10*s`` where the others test ``>``).
_Hard = tuple[int, int, int, int, int]  # (dec_exp, b, s, m, width)


def _setup(mag: float) -> tuple[str, int] | _Hard:
    """getBinaryToASCIIConverter + the first half of dtoa: the digits of an integral double below 2**63
    (developLongDigits) as ``(digits, exponent)``, or the hard case's ``(dec_exp, b, s, m, width)``."""
    bits: int = _unpack_bits(_pack_double(mag))[0]
    fract_bits = bits & _SIGNIF_MASK
    bin_exp = bits >> _EXP_SHIFT
    if bin_exp:
        fract_bits |= _FRACT_HOB
        n_sig = 53
    else:  # subnormal: normalize so the high-order bit sits at bit 52
        n_sig = fract_bits.bit_length()
        fract_bits <<= 53 - n_sig
        bin_exp = n_sig - 52
    bin_exp -= 1023

    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = 53 - tail_zeros
    n_tiny_bits = n_fract_bits - bin_exp - 1
    if n_tiny_bits <= 0:
        n_tiny_bits = 0
        if -21 <= bin_exp <= 62:
            # An integral double below 2**63: its exact digits, rounded (half up) at a digit count fixed by
            # the exponent when it is at least 2**58 (developLongDigits).
            lvalue = fract_bits << (bin_exp - 52) if bin_exp >= 52 else fract_bits >> (52 - bin_exp)
            insignificant = _INSIGNIFICANT_FOR_POW2[bin_exp - 54] if bin_exp > 55 else 0
            if insignificant:
                pow10 = _POW10[insignificant]
                lvalue, residue = divmod(lvalue, pow10)
                if residue >= pow10 >> 1:
                    lvalue += 1
            text = str(lvalue)
            return text.rstrip("0"), insignificant + len(text)

    # estimateDecExp: the same double expression in the same order, floored
    dec_exp = math.floor((fract_bits * _TWO_M52 - 1.5) * 0.289529654 + 0.176091259 + bin_exp * 0.301029995663981)
    if dec_exp < 0:
        b5, s5 = -dec_exp, 0
    else:
        b5, s5 = 0, dec_exp
    b2 = b5 + n_tiny_bits + bin_exp - (n_fract_bits - 1)
    s2 = s5 + n_tiny_bits
    m2 = b2 + n_fract_bits - 1 - n_sig
    common2 = b2 if b2 < s2 else s2
    b2 -= common2
    s2 -= common2
    m2 -= common2
    if n_fract_bits == 1:  # a power of two: the gap below is half the gap above; Java narrows both sides
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < 27 else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 < 26 else (s5 + 1) * 3)
    width = (32 if b_bits < 32 and ten_s_bits < 32 else 64) if b_bits < 64 and ten_s_bits < 64 else 0
    pow5 = _POW5[b5]
    return dec_exp, ((fract_bits >> tail_zeros) * pow5) << b2, _POW5[s5] << s2, pow5 << m2, width


def _roundup(digits: str, dec_exponent: int) -> tuple[str, int]:
    """roundup(): add one to the last digit; a carry out of the first digit leaves "1" then zeros."""
    n = len(digits)
    text = str(int(digits) + 1)
    if len(text) > n:
        return "1" + "0" * (n - 1), dec_exponent + 1
    return text.zfill(n), dec_exponent


def _dtoa_steps(mag: float) -> tuple[str, int]:
    """Java 8..18's digits by FloatingDecimal's own digit loop, one step at a time, int/long wrap-around
    included: the reference :func:`jdk17_digits` (which skips to the stopping digit) is tested against."""
    setup = _setup(mag)
    if len(setup) == 2:
        return setup
    dec_exp, b, s, m, width = setup
    ten_s = s * 10
    digits: list[int] = []
    if width:
        # int or long arithmetic: b, s and 10*s fit, m*10 and b+m may wrap around.
        q, r = divmod(b, s)
        b = 10 * r
        m = _wrap(m * 10, width)
        low = b < m
        high = _wrap(b + m, width) > ten_s
        if q == 0 and not high:  # decExp was estimated one too high
            dec_exp -= 1
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:  # E-form prints at least two digits
            high = low = False
        while not low and not high:
            q, r = divmod(b, s)
            b = 10 * r
            m = _wrap(m * 10, width)
            if m > 0:
                low = b < m
                high = _wrap(b + m, width) > ten_s
            else:  # m overflowed to a negative value: Java stops here
                low = high = True
            digits.append(q)
        low_digit_difference = 2 * b - ten_s
    else:
        # FDBigInteger arithmetic: exact, and the round-up test is b + m >= 10*s.
        q, r = divmod(b, s)
        b = 10 * r
        m *= 10
        low = b < m
        high = b + m >= ten_s
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:
            high = low = False
        while not low and not high:
            q, r = divmod(b, s)
            b = 10 * r
            m *= 10
            low = b < m
            high = b + m >= ten_s
            digits.append(q)
        low_digit_difference = 2 * b - ten_s if high and low else 0
    text = "".join([_DIGIT_CHARS[d] for d in digits])
    if high and (not low or low_digit_difference > 0 or (low_digit_difference == 0 and digits[-1] & 1)):
        return _roundup(text, dec_exp + 1)
    return text, dec_exp + 1


def jdk17_digits(mag: float) -> tuple[str, int]:
    """Java 8..18's ``Double.toString`` digits of a finite ``mag > 0``: ``(digits, exponent)``, value
    ``0.DIGITS * 10**exponent``. The digits may end in zeros where Java prints them (``1.0E-5`` is ``("10", -4)``).

    Java's loop emits digit j (j = 1, 2, ...) with remainder R_j = b*10**(j-1) mod s and stops at the first j
    where R_j < m*10**(j-1) (truncating is within half an ULP) or R_j + m*10**(j-1) > s (rounding up is; ``>=``
    in FDBigInteger arithmetic). Both tests, once true, stay true for every later j (R_{j+1} <= 10*R_j, and
    R_{j+1} + m*10**j = 10*(R_j + m*10**(j-1)) - q*s with q <= 9), so the stopping j can be found by probing a
    few j directly: usually the length of the shortest repr, and the j below it. Where Java's int/long
    ``m*10`` or ``b+m`` would wrap around before that j, :func:`_dtoa_steps` follows the loop step by step."""
    setup = _setup(mag)
    if len(setup) == 2:
        return setup
    dec_exp, b, s, m, width = setup
    strict = width != 0
    quo, rem = divmod(b, s)
    low = rem < m
    high = rem + m > s if strict else rem + m >= s
    dropped = quo == 0 and not high  # decExp was estimated one too high: the leading 0 is not a digit
    if dropped:
        dec_exp -= 1
    if (low or high) and not dropped and -3 <= dec_exp < 8:
        k = 1  # one digit is enough (F-form allows it; E-form prints at least two)
    else:
        # the first j >= 2 that stops: guess, then bisect [lo, hi] keeping "j = hi stops"
        lo = 2
        guess = j = max(lo, len(repr(mag).partition("e")[0].replace(".", "").strip("0")) + dropped)
        # When the guess stops, the j below needs no probe if Java's interval (x - m, x + m), or
        # (x - m, x + m] in FDBigInteger arithmetic, lies within the doubles reading back to x: then a stop
        # at j - 1 would be a decimal shorter than the shortest repr. That holds unless the closed end is
        # the exact midpoint to an odd x's upper neighbour. (Step j has j significant digits, j - 1 when the
        # leading 0 was dropped; with a kept leading 0 the count is off by one, so probe then.)
        proven = (quo > 0 or dropped) and (strict or not _unpack_bits(_pack_double(mag))[0] & 1)
        hi = 0
        below = True  # after a guess that stops, try the j just below it before bisecting
        while True:
            scale = _POW10[j - 1]
            quo, rem = divmod(b * scale, s)
            t = m * scale
            low = rem < t
            high = rem + t > s if strict else rem + t >= s
            if low or high:
                hi = j
                if proven and j == guess:
                    lo = j
            else:
                lo = j + 1
                if not hi:  # no stop known yet: the first j with m*10**(j-1) >= s stops
                    hi = lo
                    while m * _POW10[hi - 1] < s:
                        hi += 1
                    below = True
            if lo >= hi:
                break
            j = hi - 1 if below else (lo + hi) // 2
            below = False
        k = hi
        if j != k:
            scale = _POW10[k - 1]
            quo, rem = divmod(b * scale, s)
            t = m * scale
            low = rem < t
            high = rem + t > s if strict else rem + t >= s
    if strict and m * _POW10[k] + 10 * s >= 1 << (width - 1):
        return _dtoa_steps(mag)  # Java's m*10 or b+m wraps around on the way: follow it step by step
    text = str(quo).zfill(k - 1 if dropped else k)
    if high and (not low or 2 * rem > s or (2 * rem == s and quo & 1)):
        return _roundup(text, dec_exp + 1)
    return text, dec_exp + 1


def shortest_digits(mag: float) -> tuple[str, int]:
    """Java 19+'s ``Double.toString`` digits of a finite ``mag > 0`` (no trailing zeros): the shortest decimal
    that rounds to ``mag``, the closest if several (Python's ``repr`` gives that); when it has one digit, the
    closest decimal of one or two digits instead (only subnormals differ: ``4.9E-324``, ``9.9E-324``)."""
    text = repr(mag)
    mantissa, _, e = text.partition("e")
    exp10 = int(e) if e else 0
    intpart, _, fracpart = mantissa.partition(".")
    all_digits = intpart + fracpart
    point = len(intpart) + exp10
    stripped = all_digits.lstrip("0")
    point -= len(all_digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    if len(digits) == 1:
        return _closest_two_digits(mag, point)
    return digits, point


def _closest_two_digits(mag: float, point: int) -> tuple[str, int]:
    """The decimal 0.NN * 10**p, 10 <= NN <= 99, closest to ``mag`` (ties to an even NN), where p is ``point``
    or one less (``mag`` may lie below the one-digit decimal ``0.D * 10**point`` that reads back to it)."""
    num, den = mag.as_integer_ratio()
    for p in (point, point - 1):
        k = 2 - p
        top, bottom = (num * 10**k, den) if k >= 0 else (num, den * 10**-k)
        n, rem = divmod(top, bottom)
        if n >= 10:
            break
    if 2 * rem > bottom or (2 * rem == bottom and n & 1):
        n += 1
    if n == 100:
        return "1", p + 1
    return str(n).rstrip("0"), p


def java_format(negative: bool, digits: str, exponent: int) -> str:
    """``BinaryToASCIIBuffer.getChars``: the digits of ``0.DIGITS * 10**exponent`` laid out as Java does."""
    sign = "-" if negative else ""
    if 0 < exponent < 8:
        n = len(digits)
        if n <= exponent:
            return f"{sign}{digits}{'0' * (exponent - n)}.0"
        return f"{sign}{digits[:exponent]}.{digits[exponent:]}"
    if -3 < exponent <= 0:
        return f"{sign}0.{'0' * -exponent}{digits}"
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exponent - 1}"
