# Link features Tessera's targets use, for the build tree and (installed beside
# TesseraConfig.cmake) for users' projects: TESSERA_NO_AS_NEEDED links a shared library even
# when nothing names its symbols (libtessera_autograd registers itself when loaded).
set(CMAKE_LINK_LIBRARY_USING_TESSERA_NO_AS_NEEDED "LINKER:--push-state,--no-as-needed" "<LINK_ITEM>"
    "LINKER:--pop-state")
set(CMAKE_LINK_LIBRARY_USING_TESSERA_NO_AS_NEEDED_SUPPORTED TRUE)
