"""Digits that are not ASCII ('²', '①': str.isdigit() holds for them, int() raises; '٣', '𝟙': int() reads them)
are no size, count or line number of the lab's store: each is refused as "forty" or "abc" is there, a clear 4xx and
never a 500; a signature parameter written with them meets s13's gate as any malformed one does. Requests go to the
running lab over loopback HTTP (the `client` fixture)."""

from __future__ import annotations

import pytest

from lab.botauth import fields

NOT_ASCII = ["²", "①", "٣", "𝟙", "4²", "EU ④"]
AGENT_UA = "CanItBuyAgent/1.0"
SHOE = {"product": "aero-run-2", "colour": "black", "size": "42", "pairs": "1"}


@pytest.mark.parametrize("size", NOT_ASCII)
def test_a_product_page_asked_for_a_size_in_other_digits_is_404_like_a_size_in_words(client, size):
    s01 = client("s01")
    assert s01.get("/products/aero-run-2", params={"size": "abc"}).status_code == 404
    assert s01.get("/products/aero-run-2", params={"size": size}).status_code == 404
    assert s01.get("/products/aero-run-2", params={"size": "42"}).status_code == 200


@pytest.mark.parametrize("field", ["size", "pairs"])
@pytest.mark.parametrize("digits", NOT_ASCII)
def test_adding_a_size_or_a_count_in_other_digits_is_a_400_like_one_in_words(client, field, digits):
    s01 = client("s01")
    assert s01.post("/cart/add", data={**SHOE, field: "forty"}).status_code == 400
    assert s01.post("/cart/add", data={**SHOE, field: digits}).status_code == 400


LINE_FIELDS = [("/cart/update", "quantity", {"line": "0"}), ("/cart/update", "line", {"quantity": "1"}),
               ("/cart/remove", "line", {})]


@pytest.mark.parametrize("digits", [*NOT_ASCII, "-²", "--1", "-", "1-"])
def test_updating_or_removing_a_line_with_other_digits_is_a_400_like_abc(client, digits):
    s01 = client("s01")
    assert s01.add_to_cart().status_code == 303
    for path, field, rest in LINE_FIELDS:
        assert s01.post(path, data={**rest, field: "abc"}).status_code == 400, (path, field)
        assert s01.post(path, data={**rest, field: digits}).status_code == 400, (path, field, digits)
    assert s01.post("/cart/update", data={"line": "0", "quantity": "2"}).status_code == 303


@pytest.mark.parametrize("digits", ["²", "³", "¹"])
def test_a_signature_parameter_in_latin_1_digits_meets_the_gate_like_any_malformed_one(client, digits):
    agent = client("s13", AGENT_UA)
    for created in (b"abc", digits.encode("latin-1")):
        headers = {"Signature-Input": b'sig1=("@authority" "signature-agent");created=' + created + b';keyid="k"',
                   "Signature": b"sig1=:YWJj:", "Signature-Agent": b'"http://127.0.0.1:9"'}
        response = agent.get("/", headers=headers)
        assert response.status_code == 403 and "Verify you are human" in response.text, created


@pytest.mark.parametrize("digits", ["²", "①", "٣", "-²", "1²"])
def test_the_structured_field_parser_reads_no_other_digits_as_an_integer(digits):
    with pytest.raises(fields.FieldError):
        fields.parse_inner_list(f'("@authority");created={digits}')
    assert fields.parse_inner_list('("@authority");created=17').params == {"created": 17}
