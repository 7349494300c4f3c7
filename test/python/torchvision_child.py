"""The tessera side of the torchvision tests, run as its own process: there ``import
torch`` is tessera (tessera.as_torch), so Debian's torchvision package, unmodified, builds
its models on tessera. The parent test process, where ``import torch`` is PyTorch, writes
jobs (a model's state_dict and input, saved by torch) and reads the results back (saved
by tessera in torch's format).

    python3 torchvision_child.py JOBS.pt RESULTS.pt
"""
import sys

import tessera.as_torch

tessera.as_torch.install()

import torch  # noqa: E402  (tessera, through the alias)
import torchvision  # noqa: E402


def stochastic_layers_off(model):
    """Dropout and stochastic depth draw from a generator whose stream differs between
    the two libraries; the comparison runs training steps with them in eval mode."""
    for module in model.modules():
        if isinstance(module, (torch.nn.Dropout, torchvision.ops.StochasticDepth)):
            module.eval()


def run_model(job):
    model = torchvision.models.get_model(job["name"], **job["kwargs"])
    result = {"params": sum(p.numel() for p in model.parameters()),
              "class": type(model).__module__ + "." + type(model).__name__}
    model.load_state_dict(job["state_dict"])
    model.eval()
    with torch.no_grad():
        result["logits"] = model(job["input"])
    if isinstance(result["logits"], dict):  # segmentation: the maps by name
        result["logits"] = torch.cat([v.flatten() for _, v in sorted(result["logits"].items())])
    if job.get("train_steps"):
        model.double().train()  # as the parent: float64, stochastic layers off
        stochastic_layers_off(model)
        opt = torch.optim.SGD(model.parameters(), lr=job["lr"], momentum=0.9)
        losses = []
        for _ in range(job["train_steps"]):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(job["input"].double()), job["target"])
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        result["losses"] = torch.stack(losses)
        result["grads"] = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return result


def run_quantized(job):
    """torchvision's quantizable model taken to int8 as torchvision's quantize_model does
    (fuse_model, prepare, convert), with the observers' statistics the parent's torch run
    gathered (its prepared state_dict); the int8 logits and the converted state_dict."""
    model = torchvision.models.get_model(job["name"], **job["kwargs"])
    model.load_state_dict(job["state_dict"])
    model.eval()
    model.fuse_model()
    model.qconfig = torch.ao.quantization.get_default_qconfig("onednn")
    torch.ao.quantization.prepare(model, inplace=True)
    with torch.no_grad():
        model(job["input"])  # observers see the calibration batch, then take torch's statistics
    model.load_state_dict(job["prepared_state_dict"])
    torch.ao.quantization.convert(model, inplace=True)
    with torch.no_grad():
        logits = model(job["input"])
    return {"logits": logits, "state_dict": model.state_dict()}


def run_transform(job):
    """A transform's output; for a random one, also its parameter draw made under the same
    seed first (the test gives torch those parameters)."""
    import torchvision.transforms as T  # noqa: N812
    import torchvision.transforms.functional as F  # noqa: N812
    env = {"T": T, "F": F, "ops": torchvision.ops, "torch": torch, "x": job["input"]}
    result = {}
    if job["kind"] == "random_transform":
        torch.manual_seed(job["seed"])
        result["params"] = eval(job["params"], env)  # noqa: S307 (expressions written by the test)
        torch.manual_seed(job["seed"])
    result["output"] = eval(job["expr"], env)  # noqa: S307
    return result


def run_features(job):
    """torchvision's feature extraction (torch.fx tracing) on tessera: the graph's node
    names, and the features the extractor returns for the job's input."""
    from torchvision.models.feature_extraction import create_feature_extractor, get_graph_node_names
    model = torchvision.models.get_model(job["name"], **job["kwargs"])
    model.load_state_dict(job["state_dict"])
    model.eval()
    train_names, eval_names = get_graph_node_names(model)
    extractor = create_feature_extractor(model, return_nodes=job["return_nodes"])
    with torch.no_grad():
        features = extractor(job["input"])
    return {"train_names": train_names, "eval_names": eval_names, "features": dict(features),
            "code": extractor.code}


def run_detection(job):
    """A detection model's eval forward on a list of images (its boxes, scores, labels and
    masks per image)."""
    model = torchvision.models.get_model(job["name"], **job["kwargs"])
    model.load_state_dict(job["state_dict"])
    model.eval()
    with torch.no_grad():
        return {"detections": model(job["input"])}


def main(jobs_path, results_path):
    jobs = torch.load(jobs_path)
    results = {}
    for key, job in jobs.items():
        try:
            run = {"model": run_model, "features": run_features, "detection": run_detection,
                   "quantized": run_quantized}.get(job["kind"], run_transform)
            results[key] = run(job)
        except Exception as e:  # reported per job, so one failure names itself
            results[key] = {"error": f"{type(e).__name__}: {e}"}
    results["__torch_is_tessera__"] = torch.tensor(torch.__name__ == "tessera")
    torch.save(results, results_path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
