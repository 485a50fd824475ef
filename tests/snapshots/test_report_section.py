"""The quality report's snapshot section: rows per table, tables not applied, anomaly examples, escaped."""

from cdc_pipelines.cli.commands import main
from cdc_pipelines.snapshots import snapshot_days
from tests.lake.partitions import write_partitions
from tests.snapshots.events import changes_df, delete, insert

D = "2024-01-01"


def test_quality_report_shows_the_days_snapshot(spark, tmp_path, capsys):
    events = [
        insert(1, {"id": "1", "name": "a"}),
        insert(2, {"id": "2", "name": "b"}),
        delete(3, {"id": "9", "name": "gone"}),
        insert(4, {"id": "1"}, table="<script>x</script>"),
        insert(5, {"k": "1"}, table="heap", pk=None),
    ]
    lake = tmp_path / "lake"
    write_partitions(changes_df(spark, events), lake / "changes")
    snapshot_days(spark, lake, [D])
    assert main(["quality", "--canonical", str(lake), "--dt", D, "--no-gx"]) == 0
    html = (lake / "reports" / f"dt={D}" / "index.html").read_text()
    section = html[html.index('<h2 id="snapshots">') :]
    assert "2 tables, 3 rows after 4 changes applied" in section and '<span class="fail">FAIL</span>' in section
    assert '<td>db.t</td><td class="n">2</td>' in section
    assert "<td>db.heap</td><td>no primary-key columns</td>" in section
    assert "delete_of_missing_key" in section and f"e{D}-3" in section
    assert "<script>" not in html and "db.&lt;script&gt;x&lt;/script&gt;" in section
