"""The commit-log record walk: the one decoder of commit-log records, below the readers.

A compiled kernel (numba, :mod:`.kernels`) steps over the records of a
segment and decodes them into columns (:mod:`.arrow`, :mod:`.record`);
:class:`.scan.ColumnarScan` reads segments in bounded windows and yields
Arrow record batches, :mod:`.parallel` splits the same walk over worker
processes, :mod:`.salvage` resumes it past damage, and :mod:`.messages`
makes :class:`~rmqformats.message.Message` objects from its rows.

The commit-log reader (:mod:`rmqformats.commitlog`) and the DLedger reader
are views over this package, so it sits under them: it imports the layouts
generated from the specs and the modules below the readers
(:mod:`rmqformats.segments`, :mod:`rmqformats.message`, errors, compression),
never a reader, the store facade or a capability. The public Arrow API is
:mod:`rmqformats.columnar`.
"""
