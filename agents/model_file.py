"""The project's model file: a policy network as tensors plus JSON, loaded without unpickling anything.

A Stable-Baselines3 zip keeps pickled Python objects in its ``data`` entry, and loading one runs whatever
code they name: a model file from someone else would be a program. This format holds only

- ``snipsnap_policy.json``: the policy's kind (a name from :data:`POLICY_KINDS`, the project's own classes),
  its sizes, the observation layout it was trained on, the tables it learned, and ``critic_inputs``: the
  columns its critic reads after the observation (0, or the hidden hands of ``train_ppo --critic state``;
  the actor never reads them, so the model plays from the observation alone);
- ``policy.safetensors``: the network's weights (safetensors: tensors and a JSON header, no code).

Loading builds the named class with the recorded sizes and loads the weights into it; every field is
checked, so a damaged or hostile file is refused with a message instead of running or allocating anything
unexpected. Playing one needs numpy and safetensors (:func:`load_arrays`); building its torch network
(:func:`load_policy`, to train on or sample from) needs the training extras: torch and sb3-contrib.
"""

from __future__ import annotations

import json
import lzma
import zipfile
import zlib
from pathlib import Path

import numpy as np

from snipsnap_env.engine import NUM_ACTIONS
from snipsnap_env.observation import LAYOUT, OBS_DIM, PER_RANK, column_map
from snipsnap_env.state import CRITIC_INPUTS, critic_bounds

FORMAT = "snipsnap-policy"
VERSION = 1
META_FILE = "snipsnap_policy.json"
WEIGHTS_FILE = "policy.safetensors"
MAX_LAYER = 4096  # units per layer a file may ask for
MAX_LAYERS = 8
MAX_WEIGHTS_BYTES = 256 << 20
MAX_PARAMETERS = MAX_WEIGHTS_BYTES // 4  # float32 numbers: a network no larger than the weights a file may hold
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # every entry's date: a file's SHA-256 keys results, so its bytes hold no clock
MAX_HEADER_BYTES = 1 << 20  # the safetensors header (JSON: names, shapes, offsets) of a policy is a few kB


def _policy_classes() -> dict:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from .rank_policy import RankSharedPolicy

    return {"mlp": MaskableActorCriticPolicy, "rank_shared": RankSharedPolicy}


POLICY_KINDS = ("mlp", "rank_shared")
#: what reading a damaged zip raises besides BadZipFile: a member flagged encrypted (RuntimeError), stored with a
#: compression method zipfile lacks (NotImplementedError), a corrupt compressed stream, a cut-short file
UNREADABLE_ZIP = (OSError, EOFError, RuntimeError, NotImplementedError, zipfile.BadZipFile, zlib.error, lzma.LZMAError)
_LEADING = [field for field in LAYOUT if field[0] in PER_RANK]  # the fields every version's layout begins with


def is_policy_file(path: str | Path) -> bool:
    """Whether ``path`` is a zip in this format (it holds ``snipsnap_policy.json``)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return META_FILE in archive.namelist()
    except UNREADABLE_ZIP:
        return False


def describe(policy) -> dict:
    """The JSON description of an SB3 policy network of one of :data:`POLICY_KINDS`; refuses others."""
    import torch
    from stable_baselines3.common.torch_layers import FlattenExtractor

    from .rank_policy import RankSharedPolicy

    params = policy._get_constructor_parameters()
    extractor = params.get("features_extractor_class")
    if params.get("activation_fn") is not torch.nn.Tanh or extractor is not FlattenExtractor:
        raise ValueError("only policies with SB3's default Tanh activations and flat features can be saved")
    kwargs = {"net_arch": params["net_arch"]}
    critic_inputs = int(policy.observation_space.shape[0]) - OBS_DIM
    if isinstance(policy, RankSharedPolicy):
        kind = "rank_shared"
        kwargs.update(rank_context=policy.rank_context, rank_hidden=policy.rank_hidden)
    elif type(policy).__name__ == "MaskableActorCriticPolicy":
        kind = "mlp"
    else:
        raise ValueError(f"cannot save a {type(policy).__name__}; known kinds: {', '.join(POLICY_KINDS)}")
    _check_critic_inputs(kind, critic_inputs)
    return {"policy": kind, "policy_kwargs": kwargs, "critic_inputs": critic_inputs}


def _check_critic_inputs(kind: str, critic_inputs) -> None:
    """Only the rank-shared actor reads the observation columns alone, so only it may have a critic that
    reads more after them (snipsnap_env.state.CRITIC_INPUTS: the hidden hands, or the true deal's lead values)."""
    if (
        type(critic_inputs) is not int
        or critic_inputs not in CRITIC_INPUTS
        or (critic_inputs and kind != "rank_shared")
    ):
        allowed = ", ".join(str(k) for k in CRITIC_INPUTS if k)
        raise ValueError(f"critic_inputs {critic_inputs!r}; allowed: 0, or {allowed} for rank_shared")


def save_policy(policy, path: str | Path, extra: dict | None = None) -> Path:
    """Write ``policy`` (an SB3 MaskableActorCriticPolicy or RankSharedPolicy) to ``path`` in this format;
    ``extra`` (JSON values: ``trained_on``, ``num_timesteps``) goes into its metadata."""
    from safetensors.torch import save

    if getattr(policy, "obs_dim", OBS_DIM) != OBS_DIM:
        raise ValueError("this policy reads an earlier version's observation; only current policies are saved")
    meta = {
        "format": FORMAT,
        "version": VERSION,
        **describe(policy),
        "observation_dim": OBS_DIM,
        "num_actions": NUM_ACTIONS,
        "layout": [list(field) for field in LAYOUT],
        **(extra or {}),
    }
    tensors = {name: tensor.detach().cpu().contiguous() for name, tensor in policy.state_dict().items()}
    path = Path(path)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:  # no clock: the same policy, the same bytes
        for name, data in ((META_FILE, json.dumps(meta, indent=1)), (WEIGHTS_FILE, save(tensors))):
            archive.writestr(zipfile.ZipInfo(name, ZIP_EPOCH), data, zipfile.ZIP_DEFLATED)
    return path


def _sizes(value, what: str) -> list[int]:
    if (
        not isinstance(value, list)
        or len(value) > MAX_LAYERS
        or not all(type(v) is int and 1 <= v <= MAX_LAYER for v in value)
    ):
        raise ValueError(f"{what} must be a list of at most {MAX_LAYERS} sizes from 1 to {MAX_LAYER}, got {value!r}")
    return value


def _size(value, what: str) -> int:
    if type(value) is not int or not 1 <= value <= MAX_LAYER:
        raise ValueError(f"{what} must be a whole number from 1 to {MAX_LAYER}, got {value!r}")
    return value


def _checked_kwargs(kind: str, kwargs) -> dict:
    """The constructor keywords of a ``kind`` policy from its JSON, every value checked."""
    allowed = {"net_arch"} | ({"rank_context", "rank_hidden"} if kind == "rank_shared" else set())
    if not isinstance(kwargs, dict) or not set(kwargs) <= allowed:
        raise ValueError(f"policy_kwargs must be an object with keys among {sorted(allowed)}, got {kwargs!r}")
    checked = {}
    arch = kwargs.get("net_arch", [])
    if isinstance(arch, dict):
        if not set(arch) <= {"pi", "vf"}:
            raise ValueError(f"net_arch may name 'pi' and 'vf' only, got {sorted(arch)}")
        checked["net_arch"] = {key: _sizes(value, f"net_arch[{key!r}]") for key, value in arch.items()}
    else:
        checked["net_arch"] = _sizes(arch, "net_arch")
    for name in ("rank_context", "rank_hidden"):
        if name in kwargs:
            checked[name] = _size(kwargs[name], name)
    return checked


def rank_head_sizes(kwargs: dict) -> tuple[int, int]:
    """(table summary, scorer's hidden units) of a rank_shared policy from its (checked) keywords: a file that names
    none has RankSharedPolicy's defaults, 32 and 64."""
    return kwargs.get("rank_context", 32), kwargs.get("rank_hidden", 64)


def _dense(inputs: int, sizes: list[int]) -> tuple[int, int]:
    """(parameters, outputs) of a stack of linear layers of ``sizes`` after ``inputs`` inputs."""
    total = 0
    for size in sizes:
        total, inputs = total + inputs * size + size, size
    return total, inputs


def parameter_count(kind: str, kwargs: dict, critic_inputs: int, obs_dim: int = OBS_DIM) -> int:
    """How many numbers the weights of a ``kind`` policy of these (checked) sizes hold: known before anything is
    built, so that a small file cannot make the loader build a huge network. (Tested against built networks.)"""
    from .rank_sizes import RANK_FEATURES, table_features, value_arch

    inputs = obs_dim + critic_inputs
    arch = kwargs.get("net_arch", [])
    if kind == "rank_shared":
        critic, last = _dense(inputs, value_arch(arch))
        context, hidden = rank_head_sizes(kwargs)
        head = _dense(table_features(obs_dim), [context])[0] + _dense(RANK_FEATURES + context, [hidden, hidden, 1])[0]
        return critic + last + 1 + head + context + 1  # + the value head, the pass logit
    pi, vf = (arch.get("pi", []), arch.get("vf", [])) if isinstance(arch, dict) else (arch, arch)
    (actor, last_pi), (critic, last_vf) = _dense(inputs, pi), _dense(inputs, vf)
    return actor + critic + last_pi * NUM_ACTIONS + NUM_ACTIONS + last_vf + 1


def _stored_numbers(weights: bytes) -> int:
    """How many float32 numbers a safetensors blob says it holds, from its header alone, every entry checked
    against the blob's length (nothing is allocated for it)."""
    if len(weights) < 8:
        raise ValueError("its weights are cut short")
    size = int.from_bytes(weights[:8], "little")
    if size > min(MAX_HEADER_BYTES, len(weights) - 8):
        raise ValueError("its weights' header is larger than the file or than any policy's")
    try:
        header = json.loads(weights[8 : 8 + size])
    except (ValueError, RecursionError):
        raise ValueError("its weights' header is not JSON") from None
    if not isinstance(header, dict):
        raise ValueError("its weights' header is not a map of tensors")
    total = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        shape = entry.get("shape") if isinstance(entry, dict) else None
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if (
            entry.get("dtype") != "F32"
            or not isinstance(shape, list)
            or not all(type(n) is int and n >= 0 for n in shape)
            or not (isinstance(offsets, list) and len(offsets) == 2 and all(type(n) is int for n in offsets))
        ):
            raise ValueError(f"its weights' header describes {name!r} as no float32 tensor of this project")
        numbers = int(np.prod(shape, dtype=object))
        if offsets[1] - offsets[0] != 4 * numbers or not 0 <= offsets[0] <= offsets[1] <= len(weights) - 8 - size:
            raise ValueError(f"its weights' header gives {name!r} a place that does not fit its shape or the file")
        total += numbers
    return total


def _is_field(field) -> bool:
    return isinstance(field, list) and len(field) == 2 and isinstance(field[0], str) and type(field[1]) is int


def read_policy_file(path: str | Path) -> tuple[dict, bytes]:
    """``(meta, weights)`` of a file in this format, every field of its metadata and its weights' header checked
    against each other (nothing built, nothing executed): a file that does not fit is refused with a ValueError."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no model file at {path}")
    try:
        with zipfile.ZipFile(path) as archive:
            infos = {info.filename: info for info in archive.infolist()}
            if META_FILE not in infos or WEIGHTS_FILE not in infos:
                raise ValueError(f"it lacks {META_FILE} or {WEIGHTS_FILE}")
            if infos[WEIGHTS_FILE].file_size > MAX_WEIGHTS_BYTES or infos[META_FILE].file_size > 1 << 20:
                raise ValueError("its entries are larger than any policy of this project")
            meta = json.loads(archive.read(META_FILE))
            weights = archive.read(WEIGHTS_FILE)
    except RecursionError:
        raise ValueError(f"{path}: its {META_FILE} nests too deep to be a policy's description") from None
    except (*UNREADABLE_ZIP, ValueError) as error:
        raise ValueError(f"{path} is not a readable policy file ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path}: {META_FILE} does not describe a {FORMAT} file")
    if meta.get("version") != VERSION:
        raise ValueError(f"{path} is version {meta.get('version')!r} of the format; this snipsnap reads {VERSION}")
    layout = meta.get("layout")
    if not (isinstance(layout, list) and all(_is_field(field) for field in layout)):
        raise ValueError(f"{path}: its observation layout is not a list of [name, size] pairs")
    kind = meta.get("policy")
    if kind not in POLICY_KINDS:
        raise ValueError(f"{path} names the policy kind {kind!r}; known: {', '.join(POLICY_KINDS)}")
    if meta.get("num_actions") != NUM_ACTIONS:
        raise ValueError(f"{path} was trained for {meta.get('num_actions')!r} actions; expected {NUM_ACTIONS}")
    obs_dim = meta.get("observation_dim")
    if type(obs_dim) is not int or obs_dim != sum(size for name, size in layout if not name.startswith("rules: ")):
        raise ValueError(f"{path}: its observation_dim {obs_dim!r} is not the size of its observation layout")
    try:
        column_map(layout)  # each column it reads is one this version still makes (others are added options)
    except ValueError as error:
        raise ValueError(f"{path}: {error}: retrain the model") from None
    if [tuple(field) for field in layout[: len(_LEADING)]] != _LEADING:
        raise ValueError(f"{path}: its observation does not begin with the per-rank fields {_LEADING}")
    try:
        meta["policy_kwargs"] = _checked_kwargs(kind, meta.get("policy_kwargs", {}))
        _check_critic_inputs(kind, meta.setdefault("critic_inputs", 0))
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    declared = parameter_count(kind, meta["policy_kwargs"], meta["critic_inputs"], obs_dim)
    if declared > MAX_PARAMETERS:
        raise ValueError(
            f"{path} declares a network of {declared:,} weights; a policy file holds at most {MAX_PARAMETERS:,}"
        )
    try:
        stored = _stored_numbers(weights)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    if stored != declared:
        raise ValueError(
            f"{path}: its weights hold {stored:,} numbers where a {kind} policy of the declared sizes has {declared:,}"
        )
    return meta, weights


def load_arrays(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """``(weights, meta)``: a file's weights as numpy arrays by their torch names, and its checked metadata —
    all a greedy player needs (:class:`agents.numpy_actor.NumpyActor`), with no torch: the core install plays
    the shipped models through this."""
    from safetensors.numpy import load

    meta, weights = read_policy_file(path)
    try:
        arrays = load(weights)
    except Exception as error:  # safetensors' own errors
        raise ValueError(f"{path}: its weights are not readable ({error})") from None
    for name, array in arrays.items():
        if not np.isfinite(array).all():
            raise ValueError(f"{path}: its weights hold NaN or infinite numbers (in {name}); the model cannot play")
    return arrays, meta


def load_policy(path: str | Path):
    """``(network, meta)`` from a file in this format: the policy network in evaluation mode on the CPU, and
    its metadata. Nothing in the file is executed; a file that does not fit is refused with a ValueError.
    (Needs torch and sb3-contrib: the training extras.)"""
    import torch
    from gymnasium import spaces

    arrays, meta = load_arrays(path)
    tensors = {name: torch.from_numpy(array.copy()) for name, array in arrays.items()}
    kind, kwargs, critic_inputs, obs_dim = (meta[key] for key in ("policy", "policy_kwargs", "critic_inputs",
                                                                  "observation_dim"))  # fmt: skip
    if obs_dim == OBS_DIM:
        observations = spaces.Box(*critic_bounds(critic_inputs))
    else:  # an earlier version's narrower observation (the network never reads the bounds)
        observations = spaces.Box(-np.inf, np.inf, (obs_dim + critic_inputs,), np.float32)
    if kind == "rank_shared":
        kwargs = {**kwargs, "obs_dim": obs_dim}
    network = _policy_classes()[kind](observations, spaces.Discrete(NUM_ACTIONS), lambda _: 0.0, **kwargs)
    try:
        network.load_state_dict(tensors, strict=True)
    except Exception as error:  # missing or misshapen tensors
        raise ValueError(f"{path}: its weights do not fit a {kind} policy of these sizes ({error})") from None
    network.set_training_mode(False)
    return network.to(torch.device("cpu")), meta
