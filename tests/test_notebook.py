"""chipchain.notebook.glue writes exactly what myst_nb.glue writes."""
from unittest import mock

import pytest

from chipchain import notebook, units


@pytest.mark.parametrize("value", [3.14159, 42, units.fmt_bytes(2.8e12), "text", [1, 2]])
@pytest.mark.parametrize("display", [True, False])
def test_same_output_as_myst_nb(value, display):
    from myst_nb import glue as myst_glue
    import myst_nb.ext.glue as glue_module

    with mock.patch.object(glue_module, "ipy_display") as theirs:
        myst_glue("key", value, display=display)
    with mock.patch("IPython.display.display") as ours:
        notebook.glue("key", value, display=display)
    assert ours.call_args == theirs.call_args
    assert notebook.GLUE_PREFIX == glue_module.GLUE_PREFIX


@pytest.mark.parametrize("bad", ["", "  ", None, 3])
def test_bad_name(bad):
    with pytest.raises(ValueError, match="name"):
        notebook.glue(bad, 1)
