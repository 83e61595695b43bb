// three-vrm's node constraints as the reference for ours (see runtime/eval/constraint_reference.py).
//
// usage: node threevrm_constraints.mjs INSTALL_DIR AVATAR.vrm FRAMES.json
//
// INSTALL_DIR holds node_modules with three and @pixiv/three-vrm-node-constraint (the
// versions constraint_reference.py installs). The avatar file is loaded by three.js's
// GLTFLoader with three-vrm's VRMNodeConstraintLoaderPlugin (which reads the constraints and
// captures the rest pose: VRMNodeConstraintManager.setInitState). FRAMES.json holds the
// posed nodes and, per frame, their local rotations (xyzw) and translations (or null).
//
// Per frame: the posed nodes' local rotations and translations are set, then
// VRMNodeConstraintManager.update() runs (dependency order, three-vrm's own).
// Prints JSON: {"nodes": [destination node indices], "rotations": [[[x, y, z, w] per
// destination] per frame]}: the destinations' local rotations after each update.
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [installDir, avatarPath, framesPath] = process.argv.slice(2);
const nm = path.join(path.resolve(installDir), "node_modules");
const url = (p) => pathToFileURL(path.join(nm, p)).href;
// the ES module builds, so that the loader, the plugin and this script share one three.js
const { GLTFLoader } = await import(url("three/examples/jsm/loaders/GLTFLoader.js"));
const NC = await import(url("@pixiv/three-vrm-node-constraint/lib/three-vrm-node-constraint.module.js"));

const frames = JSON.parse(readFileSync(framesPath, "utf8"));
const data = readFileSync(avatarPath);
const loader = new GLTFLoader();
loader.register((parser) => new NC.VRMNodeConstraintLoaderPlugin(parser));

const gltf = await new Promise((resolve, reject) => {
  loader.parse(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength), "", resolve, reject);
});
const manager = gltf.userData.vrmNodeConstraintManager;
if (!manager) throw new Error("no VRMNodeConstraintManager: the file has no VRMC_node_constraint in extensionsUsed");
const nodes = await gltf.parser.getDependencies("node");
const index = new Map(nodes.map((o, i) => [o, i]));
const destinations = [...manager.constraints].map((c) => index.get(c.destination)).sort((a, b) => a - b);

const rotations = [];
for (let f = 0; f < frames.rotations.length; f++) {
  frames.posed.forEach((n, k) => {
    nodes[n].quaternion.fromArray(frames.rotations[f][k]);
    if (frames.translations) nodes[n].position.fromArray(frames.translations[f][k]);
  });
  manager.update();
  rotations.push(destinations.map((n) => nodes[n].quaternion.toArray()));
}
process.stdout.write(JSON.stringify({ nodes: destinations, rotations }));
