"""Stock Marlin 2.1: its G-code dialect, the host link and a simulator on a pty."""
