"""Stock grblHAL: its dialect, the host link and session, and a simulator on a pty."""
