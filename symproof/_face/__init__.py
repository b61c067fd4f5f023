"""The face: how people reach symproof -- the command line, the Python verbs, the notebook view.

``_cli`` parses the command line and dispatches to ``_check_command``
(``symproof check``), ``_audit_command`` (``symproof audit``) and the commands
of the packages below; ``_api`` is ``symproof.verify / check / export``;
``_notebook`` renders results for Jupyter (registered by ``symproof/__init__``
through :mod:`symproof._ground._display`).  The face may import every package;
nothing imports the face.
"""
