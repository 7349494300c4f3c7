// tessera.Generator: the Python handle to an at::Generator (torch.Generator), the process's
// default CPU generator (tessera.default_generator, manual_seed, seed, initial_seed,
// get_rng_state, set_rng_state), and the argument parser's view of generator objects.
#pragma once

#include <Python.h>

#include <aten/core/Generator.h>

namespace tessera::python {

// Whether obj is a tessera.Generator.
bool is_generator(PyObject* obj);
// The generator inside obj; precondition: is_generator(obj).
at::Generator generator_of(PyObject* obj);
// A new tessera.Generator object for g (a new reference; g's state is shared, not copied).
PyObject* generator_object(at::Generator g);

// Adds Generator, default_generator, manual_seed, seed, initial_seed, get_rng_state,
// set_rng_state and _add_tensor_methods to the module; false with a Python error set on
// failure.
bool init_generator(PyObject* module);

}  // namespace tessera::python
