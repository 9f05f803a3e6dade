"""A Pololu Maestro servo controller: its compact protocol, the host link and a simulator on a pty."""
