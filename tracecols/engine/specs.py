"""The device peak table (data/devices.csv) as an Arrow table, found in the wheel or the source checkout.

One row per device model and data type: `model`, `match` (a case-insensitive regular
expression over the `deviceProperties` name; the first matching row in file order wins),
`dtype` (fp64, fp32, tf32, fp16, bf16, fp8, int8), `dense_tflops_per_s`, `mem_tb_per_s`, `source`.
"""

from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("match", pa.string()),
        ("dtype", pa.string()),
        ("dense_tflops_per_s", pa.float64()),
        ("mem_tb_per_s", pa.float64()),
        ("source", pa.string()),
    ]
)


def specs_path():
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "data" / "devices.csv", here.parent / "data" / "devices.csv"):  # wheel; checkout
        if cand.is_file():
            return cand
    return None


def device_specs_table():
    """Arrow table of data/devices.csv with a `priority` column (file order); empty if missing."""
    p = specs_path()
    if p is None:
        t = SCHEMA.empty_table()
    else:
        t = pacsv.read_csv(p, convert_options=pacsv.ConvertOptions(column_types=SCHEMA))
        t = t.select(SCHEMA.names)
    return t.append_column("priority", pa.array(range(t.num_rows), pa.int32()))
