"""Reading ARC-shaped test sets from files (ops/arc_files.py): ARC's own files read, and a file cannot lend
ARC-100 ids to another store; every error is one line naming the file (and the row and field when it is about
one). ARC's files are read from /work/shared/arc-100-v1 when present, else from the bundled copy."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from domain.leaderboards.arc import ARC_TEST_SET, COURSE_TEST_SET, arc_100_v1
from ops import arc_files
from ops.arc_files import locate, read_test_set

BUNDLED = Path(__file__).parents[3] / "domain" / "testsets"
SHARED = Path("/work/shared/arc-100-v1")
FROZEN = arc_100_v1().by_id()


def arc_rows(count: int = 12) -> list[dict[str, str]]:
    return [{"id": item.id, "host": item.host, "product_url": item.product_url, "name": item.name}
            for item in list(FROZEN.values())[:count]]


def write_csv(path: Path, rows: list[dict[str, str]], *, bom: bool = False) -> Path:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(("\ufeff" if bom else "") + out.getvalue(), encoding="utf-8")
    return path


def refused(name: str | Path) -> str:
    with pytest.raises(arc_files.TestSetError) as caught:
        read_test_set(str(name))
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("name", ["arc-100.csv", "arc-100.json"])
def test_arcs_own_files_read_as_arc_100_v1(name: str) -> None:
    path = SHARED / name if (SHARED / name).is_file() else BUNDLED / arc_files.ALIASES[name]
    found = read_test_set(str(path))
    assert found.name == ARC_TEST_SET and len(found.items) == 100
    assert all(FROZEN[item.id].product_url == item.product_url for item in found.items)


@pytest.mark.parametrize(("name", "bundled"), [("arc-100.csv", "arc-100-v1.csv"), ("arc-100.json", "arc-100-v1.json")])
def test_arcs_own_file_names_are_the_bundled_copies(name: str, bundled: str) -> None:
    """`--test-set arc-100.csv` or `arc-100.json`, as ARC names its files, is our copy of that file."""
    assert locate(name) == BUNDLED / bundled
    if (SHARED / name).is_file():  # the copy is ARC's file as published, byte for byte
        assert (BUNDLED / bundled).read_bytes() == (SHARED / name).read_bytes()
    found = read_test_set(name)
    assert found.name == ARC_TEST_SET and [i.product_url for i in found.items] == [
        i.product_url for i in FROZEN.values()]
    assert refused(f"./{name}") == f"no test set file './{name}'"  # a path is read as given, never aliased


def test_arc_100_ids_lent_to_our_lab_are_refused_naming_file_row_and_field(tmp_path: Path) -> None:
    # The audit's file: ARC-100 ids, the first store's host, products on our lab (12 of 12 "successes").
    rows = [{**row, "product_url": f"https://s{n:02d}.lab.canitbuy.com/products/aero-run-2"}
            for n, row in enumerate(arc_rows(), start=1)]
    path = write_csv(tmp_path / "fake-arc.csv", rows)
    assert refused(path) == (
        f"{path}: row 2: product_url 'https://s01.lab.canitbuy.com/products/aero-run-2' is not "
        f"'{FROZEN['arc100-v1-001'].product_url}', the product_url of arc100-v1-001 in ARC-100 v1")
    rows = [{**row, "host": "s05.lab.canitbuy.com"} if row["id"] == "arc100-v1-004" else row for row in arc_rows()]
    path = write_csv(tmp_path / "host.csv", rows)
    assert refused(path) == (f"{path}: row 5: host 's05.lab.canitbuy.com' is not '{FROZEN['arc100-v1-004'].host}', "
                             f"the host of arc100-v1-004 in ARC-100 v1")


def test_a_json_row_with_another_stores_address_is_refused_naming_its_index(tmp_path: Path) -> None:
    stores = arc_rows(3)
    stores[2]["product_url"] = "https://example.com/products/anything"
    path = tmp_path / "arc.json"
    path.write_text(json.dumps({"stores": stores}), encoding="utf-8")
    assert refused(path).startswith(f"{path}: stores[2]: product_url 'https://example.com/products/anything' is not")


def test_hosts_compare_as_arc_compares_them(tmp_path: Path) -> None:
    # arc100ByHost: lowercased, one trailing dot and a leading www. dropped.
    rows = arc_rows(3)
    rows[0]["host"] = "WWW." + rows[0]["host"].upper() + "."
    rows[1]["host"] = " www." + rows[1]["host"] + " "
    assert read_test_set(str(write_csv(tmp_path / "hosts.csv", rows))).name == ARC_TEST_SET
    rows[2]["host"] = "shop." + rows[2]["host"]
    assert "row 4: host 'shop." in refused(write_csv(tmp_path / "other.csv", rows))


def course_rows() -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((BUNDLED / "canitbuy-course-2.1.csv").read_text(encoding="utf-8"))))


def test_a_course_row_runs_the_station_its_id_names(tmp_path: Path) -> None:
    """A row's id is the cell its result is recorded under: `s01` pointed at s05 would score s05's run as s01."""
    rows = course_rows()
    rows[0]["product_url"] = "https://s05.lab.canitbuy.com/products/aero-run-2"
    path = write_csv(tmp_path / "lent.csv", rows)
    assert refused(path) == (f"{path}: row 2: product_url 'https://s05.lab.canitbuy.com/products/aero-run-2' is not "
                             "on station s01, which the row's id names")
    rows = course_rows()
    rows[2]["host"] = "s04.lab.canitbuy.com"
    path = write_csv(tmp_path / "host.csv", rows)
    assert refused(path) == (f"{path}: row 4: host 's04.lab.canitbuy.com' is not on station s03, which the row's id "
                             "names")
    rows = course_rows()
    rows[1]["product_url"] = "https://example.com/products/aero-run-2"
    assert "row 3: product_url 'https://example.com/products/aero-run-2' is not on station s02" in refused(
        write_csv(tmp_path / "elsewhere.csv", rows))
    # A lab of one's own, on its domain and port, is the same station.
    rows = course_rows()[:3]
    for row in rows:
        row["host"] = f"{row['id']}.lab.localhost"
        row["product_url"] = f"http://{row['id']}.lab.localhost:8700/products/aero-run-2"
    assert [i.id for i in read_test_set(str(write_csv(tmp_path / "local.csv", rows))).items] == ["s01", "s02", "s03"]


def test_a_csv_saved_by_excel_with_a_byte_order_mark_reads(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "excel.csv", arc_rows(), bom=True)
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    found = read_test_set(str(path))
    assert found.name == ARC_TEST_SET and [i.id for i in found.items] == [r["id"] for r in arc_rows()]
    course = (BUNDLED / "canitbuy-course-2.1.csv").read_text(encoding="utf-8")
    (tmp_path / "course.csv").write_text("\ufeff" + course, encoding="utf-8")
    assert read_test_set(str(tmp_path / "course.csv")).name == COURSE_TEST_SET


def test_a_path_with_a_folder_that_does_not_exist_is_an_error_not_the_bundled_file(tmp_path: Path) -> None:
    assert refused("/nonexistent/dir/arc-100-v1.csv") == "no test set file '/nonexistent/dir/arc-100-v1.csv'"
    assert refused(tmp_path / "arc-100-v1.csv") == f"no test set file '{tmp_path / 'arc-100-v1.csv'}'"
    # A bare name still finds the bundled file.
    assert locate("arc-100-v1.csv") == BUNDLED / "arc-100-v1.csv"
    assert refused("no-such-set.csv") == "no test set file 'no-such-set.csv' (nor domain/testsets/no-such-set.csv)"


def test_every_row_error_names_the_file(tmp_path: Path) -> None:
    rows = arc_rows(3)
    rows[1]["product_url"] = "ftp://example.com/x"
    path = write_csv(tmp_path / "ftp.csv", rows)
    assert refused(path) == (f"{path}: row 3: product_url 'ftp://example.com/x' must be an "
                             "http:// or https:// address with a host")
    rows = arc_rows(3)
    rows[2]["host"] = ""
    path = write_csv(tmp_path / "empty.csv", rows)
    assert refused(path) == f"{path}: row 4: host is missing"
    path = tmp_path / "stores.json"
    path.write_text(json.dumps({"stores": [{"id": "arc100-v1-001"}]}), encoding="utf-8")
    assert refused(path) == f"{path}: stores[0]: host is missing"
    path = tmp_path / "cols.csv"
    path.write_text("id,host\narc100-v1-001,apc.fr\n", encoding="utf-8")
    assert refused(path) == f"{path}: the CSV lacks the column(s) product_url"
    path = tmp_path / "twice.csv"
    write_csv(path, [*arc_rows(2), arc_rows(1)[0]])
    assert refused(path) == f"{path}: row 4: arc100-v1-001 appears twice"
    path = tmp_path / "bad.json"
    path.write_text("{", encoding="utf-8")
    assert refused(path).startswith(f"{path}: not JSON: ")


def test_arc_run_refuses_the_file_before_anything_runs(tmp_path: Path) -> None:
    rows = [{**row, "product_url": f"https://s{n:02d}.lab.canitbuy.com/products/aero-run-2"}
            for n, row in enumerate(arc_rows(), start=1)]
    path = write_csv(tmp_path / "fake-arc.csv", rows)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANITBUY_")} | {"CANITBUY_DATA_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "ops.cli", "arc", "run", "--test-set", str(path), "--model",
                           "baseline-robust"], cwd=BUNDLED.parents[1], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1 and not done.stdout
    assert done.stderr.splitlines() == [f"canitbuy: {path}: row 2: product_url "
                                        "'https://s01.lab.canitbuy.com/products/aero-run-2' is not "
                                        f"'{FROZEN['arc100-v1-001'].product_url}', the product_url of arc100-v1-001 "
                                        "in ARC-100 v1"]
