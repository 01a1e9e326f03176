import pytest

from legalrag.numerals import to_chinese, to_int


@pytest.mark.parametrize("text,value", [
    ("十", 10), ("十五", 15), ("二十一", 21), ("一百", 100), ("一百零五", 105), ("一百一十", 110),
    ("一千零二十", 1020), ("两千", 2000), ("二千零一", 2001), ("一万零一", 10001), ("266", 266), ("２６６", 266),
])
def test_to_int(text, value):
    assert to_int(text) == value


@pytest.mark.parametrize("value,text", [
    (1, "一"), (10, "十"), (15, "十五"), (21, "二十一"), (100, "一百"), (105, "一百零五"), (110, "一百一十"),
    (1020, "一千零二十"), (1260, "一千二百六十"), (2000, "二千"), (10001, "一万零一"),
])
def test_to_chinese(value, text):
    assert to_chinese(value) == text


def test_round_trip_small_range():
    for n in range(0, 3000):
        assert to_int(to_chinese(n)) == n


@pytest.mark.parametrize("bad", ["", "条", "一二", "abc"])
def test_rejects_non_numerals(bad):
    with pytest.raises(ValueError):
        to_int(bad)
