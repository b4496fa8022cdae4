# Generated from formats/rocketmq_timer_check.ksy by `python -m rmqformats.codegen`; do not edit.
# Edit the spec and run `make generate`.
"""Apache RocketMQ timer checkpoint: construct schema generated from formats/rocketmq_timer_check.ksy.

``rocketmq_timer_check`` parses and builds the whole format; each Kaitai type is a
construct object (a function returning one for a type with params) and each
Kaitai enum an ``enum.IntEnum``.
"""

import enum

import construct as c

from rmqformats import construct_adapters as ka

__all__ = [
    "timer_data_version",
    "rocketmq_timer_check",
]


# A `DataVersion` (the version stamp the broker's JSON config files also
# carry), stored as three longs.
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/remoting/src/main/java/org/apache/rocketmq/remoting/protocol/DataVersion.java
timer_data_version = ka.Struct(
    # The message store's state-machine version when the stamp last changed
    # (0 unless in controller mode).
    "state_version" / c.Int64sb,
    # Time of the last change, in ms since the epoch.
    "timestamp" / c.Int64sb,
    # Number of changes since the version was created.
    "counter" / c.Int64sb,
)


# The file `<store>/config/timercheck` (`TimerCheckpoint`, 5.0.0+): the
# progress of the timer message store (the timer wheel and timer log kept
# for messages sent with a delivery time, see rocketmq_timer_log and
# rocketmq_timer_wheel). Despite its folder it is binary, not JSON: the
# broker maps one 4096-byte page of the file and rewrites the fields in
# place on every timer flush and on shutdown; the bytes after them stay
# zero. The layout is the same from 5.0.0 to 5.3.x.
#
# On start the timer store recovers the timer log from one segment before
# `ofs_last_timer_log_flush`, resumes reading the timer topic's queue near
# `last_timer_queue_offset` and resumes delivery at `last_read_time_ms`
# (but not earlier than the wheel can hold).
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerCheckpoint.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java
# See: https://github.com/apache/rocketmq/blob/rocketmq-all-5.1.4/broker/src/main/java/org/apache/rocketmq/broker/BrokerPathConfigHelper.java
rocketmq_timer_check = ka.Struct(
    # Delivery time (ms since the epoch, a multiple of the timer precision)
    # up to which the wheel's slots have been read and their messages
    # delivered.
    "last_read_time_ms" / c.Int64sb,
    # Timer-log offset up to which the timer log had been flushed.
    "ofs_last_timer_log_flush" / c.Int64sb,
    # Consume offset in queue 0 of the timer topic `rmq_sys_wheel_timer`
    # (the commit-log copies of timer messages) up to which the timer store
    # had committed its progress, capped at `master_timer_queue_offset`.
    "last_timer_queue_offset" / c.Int64sb,
    # On the broker that delivers timer messages (a master), its own
    # committed queue offset; on a slave, the master's value as last
    # synchronised.
    "master_timer_queue_offset" / c.Int64sb,
    # Version stamp of this checkpoint, changed whenever the timer store commits
    # progress.
    "data_version" / timer_data_version,
    # Rest of the 4096-byte page; never written, so zero.
    "reserved" / c.GreedyBytes,
)
