# SPDX-License-Identifier: BSD-3-Clause
"""Normal forms of identifier values (e-mail, phone, IBAN, codes) and entities in text.

Two spellings of one identifier ("Ann.Lee@Mail.com " and "ann.lee@mail.com"; "(555)
123-4567" and "+1 555 123 4567") are the same value to whoever reads the release, so
the replay tests compare values after normalisation as well as exactly:

* **e-mail** (``local@domain.tld``): lowercased, surrounding whitespace stripped;
* **phone number** (digits with ``+ ( ) - . /`` and spaces, 7 to 15 digits): its
  *national significant number* (the digits after the country code and without the
  trunk prefix: ``+1 555 123 4567``, ``(555) 123-4567`` and ``1-555-123-4567`` are all
  ``5551234567``; ``+44 20 1234 5678`` and ``020 1234 5678`` are ``2012345678``), read
  with ``phonenumbers``' country codes and, for numbers without one, parsed in the
  default region (``phone_region``, ``"US"`` unless given); a national number of another
  region is reduced to its digits without leading zeros;
* **IBAN**: ``stdnum``'s compact form (spaces removed, upper case) when the checksum holds;
* **anything else**: case folded, every whitespace and punctuation character removed
  (``"AB-12 34"`` -> ``"ab1234"``), which is also ``stdnum``'s compact form of most
  national identifiers (social security, tax and passport numbers).

A value that normalises to the empty string is never a match.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from synthrisk._optional import import_optional
from synthrisk.exceptions import ParameterError

__all__ = [
    "DEFAULT_REGION",
    "ENTITY_PATTERN",
    "Normaliser",
    "check_region",
    "find_entities",
]

#: region of phone numbers written without a country code
DEFAULT_REGION = "US"

_EMAIL = re.compile(r"^\s*[^@\s]+@[^@\s]+\.[^@\s]+\s*$")
_PHONE = re.compile(r"^\s*\+?[\d\s().\-/]{7,24}\s*$")
_IBAN = re.compile(r"^\s*[A-Za-z]{2}\d{2}[A-Za-z0-9 ]{11,40}\s*$")
_DIGITS = re.compile(r"\D+")
_DATE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}$")

#: e-mails, phone numbers, IBANs and other long codes inside free text
ENTITY_PATTERN = re.compile(
    r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"  # e-mail
    r"|\+?\(?\d[\d\s().\-/]{5,20}\d"  # phone number or number-like code
    r"|\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,3})?\b"  # IBAN
    r"|\b(?=[A-Za-z0-9\-]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+){1,4}\b"  # coded id (AB-1234-X)
)


def check_region(value: object, name: str) -> str:
    """Check a ``phone_region`` parameter: a two-letter region code, upper-cased."""
    if isinstance(value, str) and len(value) == 2 and value.isalpha():
        return value.upper()
    msg = f"`{name}` must be a two-letter region code such as 'US' or 'GB'; got {value!r}."
    raise ParameterError(msg)


def _generic(value: str) -> str:
    folded = unicodedata.normalize("NFKC", value).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


class Normaliser:
    """Normal form of identifier values (see the module docstring); caches by value.

    Parameters
    ----------
    region : str
        Region of phone numbers written without a country code (ISO 3166 alpha-2).
    """

    def __init__(self, region: str = DEFAULT_REGION) -> None:
        self.region = region
        self._cache: dict[str, str] = {}
        self._phonenumbers: ModuleType | None = None
        self._iban: ModuleType | None = None

    def _phone(self, value: str) -> str:
        digits = _DIGITS.sub("", value)
        if not 7 <= len(digits) <= 15:
            return ""
        fast = self._fast_phone(value, digits)
        if fast is not None:
            return fast
        pn = self._pn()
        try:
            number = pn.parse(value, self.region)
        except pn.NumberParseException:
            number = None
        if number is not None and pn.is_valid_number(number):
            return str(pn.national_significant_number(number))
        # written nationally in another region than ``phone_region`` (``020 1234 5678``
        # for a London number): the digits without the trunk prefix
        return digits.lstrip("0")

    def _pn(self) -> Any:
        if self._phonenumbers is None:
            self._phonenumbers = import_optional("phonenumbers", package="phonenumbers")
        return self._phonenumbers

    def _fast_phone(self, value: str, digits: str) -> str | None:
        """The national significant number without parsing where the digits decide it.

        An international number without a bracketed trunk prefix (``+44 (0)20 …`` is
        parsed): the digits after its country code (``phonenumbers``' table of country
        codes); in the North American plan (region US or CA) ten digits, or eleven
        starting with 1. ``phonenumbers`` takes about 40 µs a value; this path, most of
        the values of a large table, a fraction of that.
        """
        if value.lstrip().startswith("+"):
            if "(0" in value:
                return None
            codes = self._pn().COUNTRY_CODE_TO_REGION_CODE
            for size in (1, 2, 3):
                if int(digits[:size]) in codes:
                    return digits[size:]
            return digits
        if self.region in ("US", "CA"):
            # a North American area code never starts with 0 or 1
            if len(digits) == 10 and digits[0] > "1":
                return digits
            if len(digits) == 11 and digits[0] == "1" and digits[1] > "1":
                return digits[1:]
        return None

    def _iban_form(self, value: str) -> str | None:
        if self._iban is None:
            self._iban = import_optional("stdnum.iban", package="python-stdnum")
        iban: Any = self._iban
        if iban.is_valid(value):
            return str(iban.compact(value))
        return None

    def __call__(self, value: object) -> str:
        """The normal form of one value ("" for a missing or empty one)."""
        if value is None or (isinstance(value, float) and value != value):
            return ""
        text = str(value)
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        if _EMAIL.match(text):
            out = text.strip().lower()
        elif _PHONE.match(text) and len(_DIGITS.sub("", text)) >= 7:
            out = self._phone(text)
        else:
            iban = self._iban_form(text) if _IBAN.match(text) else None
            out = _generic(text) if iban is None else iban
        self._cache[text] = out
        return out

    def many(self, values: Iterable[object]) -> list[str]:
        """The normal forms of ``values``, in order."""
        return [self(v) for v in values]


def find_entities(text: str, normalise: Normaliser) -> set[str]:
    """Normal forms of the e-mails, phone numbers and codes found in ``text``."""
    found = set()
    for match in ENTITY_PATTERN.finditer(text):
        token = match.group(0)
        if "@" not in token and sum(ch.isdigit() for ch in token) < 6:
            continue
        if _DATE.match(token.strip()):
            continue  # short numbers (doses, dates' parts) are not identifiers
        form = normalise(token)
        if form:
            found.add(form)
    return found
