"""The chapter's derivations and the shipped examples, seen from a source checkout.

An installed symproof (wheel or editable) holds the repository's top-level
``derivations/`` folder under this name: pyproject.toml maps it onto this
package, so this file is not what gets installed.  In a checkout run with
``PYTHONPATH=.`` this file stands in and replaces itself with that folder's
package, so that ``symproof._derivations.<module>``, ``__path__`` and
``importlib.resources.files`` all see ``derivations/`` exactly as an install does.
"""

import importlib.util as _util
import os as _os
import sys as _sys

_folder = _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))),
                        "derivations")
_spec = _util.spec_from_file_location(__name__, _os.path.join(_folder, "__init__.py"),
                                      submodule_search_locations=[_folder])
_module = _util.module_from_spec(_spec)
_sys.modules[__name__] = _module  # the import statement returns what sys.modules holds after this body
_spec.loader.exec_module(_module)
