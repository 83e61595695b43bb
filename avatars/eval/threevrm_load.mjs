// Load a VRM file with three-vrm 3.5.5 (GLTFLoader + VRMLoaderPlugin) in Node and step its
// springs: the check that a try-on export is a VRM three-vrm can use (avatars/eval/threevrm_load.py).
//
// usage: node threevrm_load.mjs INSTALL_DIR FILE.vrm FRAMES
//
// Textures are not decoded (Node has no image decoder): a GLTFLoader plugin hands three-vrm
// an empty THREE.Texture for every texture; everything else is three-vrm's own loading
// (meta, humanoid, expressions, MToon, VRMC_springBone joints and colliders). Then, for
// FRAMES frames of 1/60 s, the raw head bone turns (yaw 60° · sin(π t)) and vrm.update(1/60)
// runs; every spring joint's world position is checked for NaN/inf.
// Prints JSON: {"version", "springs", "joints", "colliders", "collider_groups", "humanoid",
// "frames", "finite", "max_tail_travel"}.
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [installDir, file, framesArg] = process.argv.slice(2);
const nm = path.join(path.resolve(installDir), "node_modules");
const THREE = await import(pathToFileURL(path.join(nm, "three/build/three.module.js")).href);
const { GLTFLoader } = await import(pathToFileURL(path.join(nm, "three/examples/jsm/loaders/GLTFLoader.js")).href);
const VRM = await import(pathToFileURL(path.join(nm, "@pixiv/three-vrm/lib/three-vrm.module.js")).href);

const loader = new GLTFLoader();
loader.register((parser) => ({ name: "swaycam_no_image_decoding", loadTexture: () => Promise.resolve(new THREE.Texture()) }));
loader.register((parser) => new VRM.VRMLoaderPlugin(parser));
const data = readFileSync(file);
const gltf = await loader.parseAsync(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength), "");
const vrm = gltf.userData.vrm;
if (!vrm) {
  console.error("three-vrm found no VRM in the file");
  process.exit(3);
}
const sbm = vrm.springBoneManager;
const joints = sbm ? [...sbm.joints] : [];
const colliderGroups = sbm ? sbm.colliderGroups : [];
const colliders = sbm ? sbm.colliders : [];
const head = vrm.humanoid.getRawBoneNode("head");
vrm.scene.updateMatrixWorld(true);
const start = joints.map((j) => new THREE.Vector3().setFromMatrixPosition(j.bone.matrixWorld));
const frames = Number(framesArg || 240);
let finite = true;
let travel = 0;
const p = new THREE.Vector3();
const rest = head.quaternion.clone();
for (let f = 0; f < frames; f++) {
  const t = (f + 1) / 60;
  head.quaternion.copy(rest).multiply(new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(0, 1, 0),
    (Math.PI / 3) * Math.sin(Math.PI * t)));
  vrm.update(1 / 60);
  vrm.scene.updateMatrixWorld(true);
  joints.forEach((j, k) => {
    p.setFromMatrixPosition(j.bone.matrixWorld);
    if (!Number.isFinite(p.x) || !Number.isFinite(p.y) || !Number.isFinite(p.z)) finite = false;
    travel = Math.max(travel, p.distanceTo(start[k]));
  });
}
const springNames = new Set(joints.map((j) => j.bone.name));
console.log(JSON.stringify({
  version: vrm.meta && vrm.meta.metaVersion, springs: sbm ? sbm.joints.size : 0, joints: joints.length,
  colliders: colliders.length, collider_groups: colliderGroups.length,
  humanoid: Object.keys(vrm.humanoid.humanBones).length, frames, finite, max_tail_travel: travel,
  joint_names: [...springNames].length,
}));
