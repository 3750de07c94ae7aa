"""Every queue test here runs on both marker formats: the compact one and
SoftwareMill kmq's (kmq/markers.py); each promise holds on either."""

import pytest

from kmqadmin.kmq.config import MARKER_FORMATS, MarkerFormat


@pytest.fixture(params=MARKER_FORMATS)
def marker_format(request: pytest.FixtureRequest) -> MarkerFormat:
    return request.param
