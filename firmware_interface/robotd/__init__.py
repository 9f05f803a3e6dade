"""robotd's own firmware protocol (docs/protocol.md): framing, the host link and its transport, the
device state machine, its simulator on a pty and the real AVR binary under simavr."""
