"""attnlab's own error types: everything ``attnlab.load`` refuses comes out as one of these (or
FileNotFoundError for a path that is not there), each naming the file and, for a tensor, the
tensor. All are ValueErrors, so code that caught ValueError before still does."""


class AttnlabError(ValueError):
    """Base of the package's refusals."""


class ConfigError(AttnlabError):
    """A config (config.json, or a safetensors file's metadata config) that attnlab would refuse
    or that asks for more than the stated limits (attnlab.limits)."""


class WeightsError(AttnlabError):
    """A weights file that does not fit the run's model, or is larger than a limit."""


class SafetensorsError(WeightsError):
    """A malformed safetensors file: header, dtype, shape or offsets."""


class OldFormatError(AttnlabError):
    """A run whose checkpoint is in attnlab's old format (checkpoint/model.pt, a TorchScript
    archive): never opened here, because opening one can run code."""
