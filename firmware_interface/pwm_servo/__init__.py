"""Hobby servos driven straight from the host, no servo controller with its own firmware in between:
the Pi's GPIO pins through gpiozero (``gpio.py``) or a PCA9685 PWM board on I²C (``pca9685.py``).

One link (``link.py``) drives both: the host makes the pulses itself, ramps them under each servo's
speed limit, and times each move by the servo's speed (``timing.py``), since a hobby servo reports
nothing. ``simulator.py`` runs the same outputs against gpiozero's mock pins or a simulated PCA9685
register file, with servos whose horns move a ``FlipSpinMechanism``.
"""
