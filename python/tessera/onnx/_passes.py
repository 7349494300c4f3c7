"""What torch 1.13's exporter does to the traced graph before writing it (its dead-code
elimination, constant folding and peephole passes), for the patterns the supported modules
produce: nodes no output needs are dropped (and with them the calls that have no ONNX
form, which are refused only when needed), an eval-mode BatchNormalization of a Conv output
nothing else reads is folded into the convolution's weight and bias, and a Transpose of a
Transpose nothing else reads becomes one (or none when they cancel)."""
from .errors import OnnxExporterError

# op_type prefix of a placeholder for a traced call without an ONNX form
UNSUPPORTED = "unsupported::"


def remove_dead_nodes(graph, outputs):
    needed = set(outputs)
    kept = []
    for node in reversed(graph.nodes):
        if any(o in needed for o in node.output):
            kept.append(node)
            needed.update(node.input)
    graph.nodes[:] = reversed(kept)
    for node in graph.nodes:
        if node.op_type.startswith(UNSUPPORTED):
            raise OnnxExporterError(f"tessera.onnx.export: exporting the operator '{node.op_type[len(UNSUPPORTED):]}' "
                                    f"to ONNX opset version {graph.opset} is not supported")


def _consumers(graph, outputs):
    count = {}
    for node in graph.nodes:
        for name in node.input:
            count[name] = count.get(name, 0) + 1
    for name in outputs:
        count[name] = count.get(name, 0) + 1
    return count


def _rename_input(graph, old, new):
    for node in graph.nodes:
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new


def _sole_producer(graph, outputs, value, op_type):
    """The op_type node that writes value, when nothing but one node reads value."""
    node = graph.producers.get(value)
    if node is None or node.op_type != op_type or node not in graph.nodes:
        return None
    return node if _consumers(graph, outputs).get(value, 0) == 1 else None


def fold_batch_norms(graph, outputs):
    np = graph.np
    for bn in [n for n in graph.nodes if n.op_type == "BatchNormalization"]:
        conv = _sole_producer(graph, outputs, bn.input[0], "Conv")
        if conv is None:
            continue
        params = list(conv.input[1:]) + list(bn.input[1:])
        if not all(p in graph.initializers for p in params):
            continue
        w = graph.initializers[conv.input[1]]
        b = graph.initializers[conv.input[2]] if len(conv.input) > 2 else np.zeros(w.shape[0], dtype=w.dtype)
        gamma, beta, mean, var = (graph.initializers[p] for p in bn.input[1:5])
        eps = next(a.f for a in bn.attribute if a.name == "epsilon")
        factor = gamma / np.sqrt(var + np.array(eps, dtype=var.dtype))
        new_w = (w * factor.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
        new_b = ((b - mean) * factor + beta).astype(w.dtype)
        w_name = graph.initializer(graph.unique_initializer_name("Conv"), new_w)
        b_name = graph.initializer(graph.unique_initializer_name("Conv"), new_b)
        del conv.input[1:]
        conv.input.extend([w_name, b_name])
        # the convolution now computes the batch norm's output: it takes the norm's name
        conv.output[0] = bn.output[0]
        graph.producers[bn.output[0]] = conv
        graph.nodes.remove(bn)


def merge_transposes(graph, outputs):
    changed = True
    while changed:
        changed = False
        for outer in [n for n in graph.nodes if n.op_type == "Transpose"]:
            inner = _sole_producer(graph, outputs, outer.input[0], "Transpose")
            if inner is None:
                continue
            first, second = list(inner.attribute[0].ints), list(outer.attribute[0].ints)
            perm = [first[p] for p in second]
            graph.nodes.remove(inner)
            if perm == list(range(len(perm))):  # they cancel: readers of the outer read the source
                graph.nodes.remove(outer)
                source, producer = inner.input[0], graph.producers.get(inner.input[0])
                if outer.output[0] in outputs and source not in outputs and producer is not None and \
                        producer in graph.nodes:
                    # (a graph output keeps its name: the source's node writes it)
                    producer.output[list(producer.output).index(source)] = outer.output[0]
                    graph.producers[outer.output[0]] = producer
                    _rename_input(graph, source, outer.output[0])
                else:
                    _rename_input(graph, outer.output[0], source)
                    if outer.output[0] in outputs:
                        graph.nodes.append(graph.onnx.helper.make_node("Identity", [source], [outer.output[0]]))
            else:
                outer.input[0] = inner.input[0]
                del outer.attribute[:]
                outer.attribute.extend([graph.onnx.helper.make_attribute("perm", perm)])
            changed = True
            break
