"""One vocabulary for event categories across torch versions and vendors.

The original is always kept in `cat_raw`; `cat` is the normalised name below.
"""

import pyarrow as pa
import pyarrow.compute as pc

# raw (lower-cased) -> normalised
_ALIASES = {
    "operator": "cpu_op",
    "cpu_op": "cpu_op",
    "runtime": "cuda_runtime",
    "cuda_runtime": "cuda_runtime",
    "hip_runtime": "cuda_runtime",
    "mtia_runtime": "cuda_runtime",
    "driver": "cuda_driver",
    "cuda_driver": "cuda_driver",
    "hip_driver": "cuda_driver",
    "kernel": "kernel",
    "mtia_ccp_events": "kernel",
    "cuda_profiler_range": "kernel",
    "memcpy": "gpu_memcpy",
    "gpu_memcpy": "gpu_memcpy",
    "memset": "gpu_memset",
    "gpu_memset": "gpu_memset",
    "ac2g": "ac2g",
    "async": "ac2g",
    "async_cpu_to_gpu": "ac2g",
    "async_gpu": "ac2g",
}

# Normalised categories by role.
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")


def normalise(raw):
    """Normalised category for one raw category string (None stays None)."""
    if raw is None:
        return None
    return _ALIASES.get(raw.lower(), raw)


def normalise_array(cat_raw):
    """Vectorised `normalise` over an Arrow string array (dictionary-encoded on the way)."""
    enc = (
        pc.dictionary_encode(cat_raw).combine_chunks() if isinstance(cat_raw, pa.ChunkedArray) else pc.dictionary_encode(cat_raw)
    )
    mapped = pa.array([normalise(v) for v in enc.dictionary.to_pylist()], pa.string())
    return pc.take(mapped, enc.indices)
