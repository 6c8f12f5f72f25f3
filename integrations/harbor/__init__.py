"""axon for Harbor (PyPI `harbor` 0.25): `AxonAgent`, an installed agent
(`harbor run -a integrations.harbor:AxonAgent`), and `DockerCliEnvironment`,
an environment over the plain docker CLI for hosts without Compose v2
(`--env integrations.harbor:DockerCliEnvironment`). See README.md here."""

from integrations.harbor.agent import AxonAgent, AxonInstallError, AxonOptions
from integrations.harbor.docker_cli import DockerCliEnvironment

__all__ = ["AxonAgent", "AxonInstallError", "AxonOptions", "DockerCliEnvironment"]
