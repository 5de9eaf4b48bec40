# SPDX-License-Identifier: BSD-3-Clause
"""The synthrisk error and warning family.

Every error subclasses :class:`SynthriskError` *and* the matching builtin, so
``except ValueError`` keeps working. Statistical caveats are warnings that are also
recorded in the metric result; they never stop an evaluation.
"""

from __future__ import annotations

__all__ = [
    "ClusterError",
    "ConfigError",
    "GeneratorError",
    "InputError",
    "KeyIntegrityError",
    "MissingDependencyError",
    "ParameterError",
    "RelationshipError",
    "SchemaMismatchError",
    "SynthriskDeprecationWarning",
    "SynthriskError",
    "SynthriskWarning",
    "TableMismatchError",
    "UnreliableEstimateWarning",
]


class SynthriskError(Exception):
    """Base class for all synthrisk errors.

    Attributes
    ----------
    metric : str or None
        The id of the metric the error concerns, when a metric raised it while it was
        built from a dict of parameters or while it ran (its message then starts with
        ``metric 'id':``).
    parameter : str or None
        The metric parameter whose value was refused, when one was.
    detail : str or None
        The message without the ``metric 'id':`` prefix.
    """

    metric: str | None = None
    parameter: str | None = None
    detail: str | None = None


class InputError(SynthriskError, ValueError):
    """A table or file cannot be used: empty, unreadable, unsupported values."""


class SchemaMismatchError(SynthriskError, ValueError):
    """The tables or the metadata do not describe the same columns."""


class ParameterError(SynthriskError, ValueError):
    """A metric or API parameter has a value that is not allowed."""


class ConfigError(SynthriskError, ValueError):
    """A configuration file is malformed or has unknown keys."""


class KeyIntegrityError(InputError):
    """The keys of related tables do not hold together.

    A primary key that repeats or is missing, a foreign key that names no parent row
    (an orphan), or a key column the metadata names that a table lacks.
    """


class RelationshipError(ConfigError):
    """Multi-table or sequential metadata that cannot define people.

    Relationships that form a cycle, name unknown tables or columns, or leave the root
    table (the table whose rows are people) ambiguous.
    """


class TableMismatchError(SchemaMismatchError):
    """The real, synthetic and holdout sides do not hold the same tables."""


class MissingDependencyError(SynthriskError, ImportError):
    """An optional dependency is needed but not installed."""


class ClusterError(SynthriskError, RuntimeError):
    """The Dask scheduler cannot be reached or the cluster cannot be started."""


class GeneratorError(SynthriskError, RuntimeError):
    """A generator failed in a shadow run of an audit: it raised, exited non-zero or wrote no table."""


class SynthriskWarning(UserWarning):
    """Base class for synthrisk warnings."""


class SynthriskDeprecationWarning(SynthriskWarning, FutureWarning):
    """An option was renamed or will be removed; the message names the version and the new name.

    A :class:`FutureWarning` (shown by default, also when the option comes from a YAML
    file or a metrics mapping, not only from code in ``__main__``).
    """


class UnreliableEstimateWarning(SynthriskWarning):
    """A risk estimate was computed but should not be trusted as it stands."""
