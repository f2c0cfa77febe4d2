"""The PTX hashes a tuning table records (docs/tuning.md, "Stale tables"):
config name -> sha256 of its PTX, for a bundle's KERNEL.json."""
import hashlib
import json
import os


def bundle_ptx_hashes(bundle_json):
    """{config name: sha256 of its PTX} of the bundle at bundle_json ({} for
    a bundle without configs)."""
    with open(bundle_json) as f:
        bundle = json.load(f)
    folder = os.path.dirname(bundle_json)
    hashes = {}
    for config in bundle.get("configs", []):
        with open(os.path.join(folder, config["ptx"]), "rb") as f:
            hashes[config["name"]] = hashlib.sha256(f.read()).hexdigest()
    return hashes
