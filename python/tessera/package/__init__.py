"""tessera.package, torch.package's API: hermetic packages of Python code, pickled objects
(tessera tensors and modules included) and resources, in a zip archive laid out as
torch.package lays it out.

PackageExporter writes one (intern / extern / mock / deny decide what happens to each
module the saved code and pickles depend on), PackageImporter loads one into a namespace of
its own. Archives of plain Python objects (and of tensors, which are written in torch's
format) can be read by torch.package, and torch.package's archives by tessera.
"""
from .analyze.is_from_package import is_from_package  # noqa: F401
from .file_structure_representation import Directory  # noqa: F401
from .glob_group import GlobGroup  # noqa: F401
from .importer import Importer, ObjMismatchError, ObjNotFoundError, OrderedImporter, sys_importer  # noqa: F401
from .package_exporter import EmptyMatchError, PackageExporter, PackagingError  # noqa: F401
from .package_importer import PackageImporter  # noqa: F401
