"""Reading FT.SEARCH replies the same way over RESP2 and RESP3, decoded or not."""

from __future__ import annotations

from hindsight_redis.core.resp import search_rows


def test_resp3_rows_with_bytes_keys_keep_their_values_as_bytes() -> None:
    reply = {
        b"total_results": 2,
        b"results": [
            {
                b"id": b"p:mem:a",
                b"score": 1.5,
                b"extra_attributes": {b"content": b"tea", b"v": b"\x00\x01"},
            },
            {b"id": b"p:mem:b", b"extra_attributes": {}},
        ],
    }
    rows = search_rows(reply, with_scores=True)
    assert [(r.key, r.score) for r in rows] == [("p:mem:a", 1.5), ("p:mem:b", None)]
    assert rows[0].fields == {"content": b"tea", "v": b"\x00\x01"}
    assert rows[1].fields == {}


def test_resp3_rows_with_text_keys() -> None:
    reply = {"results": [{"id": "p:mem:a", "score": "2", "extra_attributes": {"content": "tea"}}]}
    [row] = search_rows(reply, with_scores=True)
    assert (row.key, row.score, row.fields) == ("p:mem:a", 2.0, {"content": "tea"})


def test_resp2_rows_with_and_without_scores() -> None:
    plain = [1, b"p:mem:a", [b"content", b"tea"]]
    scored = [1, b"p:mem:a", b"0.5", [b"content", b"tea"]]
    assert search_rows(plain)[0].fields == {"content": b"tea"}
    assert search_rows(scored, with_scores=True)[0].score == 0.5
