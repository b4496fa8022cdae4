"""What changed on disk between RocketMQ releases, read from the version annotations in ``formats/``.

* :mod:`.releases`: the known releases, in order (``formats/releases.yaml``).
* :mod:`.annotations`: the ``-rmq-since`` / ``-rmq-until`` / ``-rmq-changes`` keys of the
  ``.ksy`` specs, the ``x-since`` keys of the JSON Schemas and the file kinds of
  ``formats/releases.yaml``, as one list of facts.
* :mod:`.diff`: what changed between two releases, with a reading verdict per format.
* :mod:`.project`: the ``.ksy`` set as one release wrote it.
* :mod:`.detect`: the releases that could have written a store, with the evidence.
"""

from .releases import Release, RELEASES, release  # noqa: F401
