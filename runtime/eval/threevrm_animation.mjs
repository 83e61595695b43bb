// three-vrm-animation reference run (see runtime/eval/motion_reference.py).
//
// usage: node threevrm_animation.mjs INSTALL_DIR SCENE.json
//
// INSTALL_DIR holds node_modules with three, @pixiv/three-vrm-core and
// @pixiv/three-vrm-animation (the versions runtime/eval/motion_reference.py installs).
// SCENE.json holds the avatar's skeleton at rest in the file's own frame (parent,
// translation, xyzw rotation, scale per node), its humanoid bones {name: node}, its meta
// version ("0" or "1"), the .vrma file's path and the times (s) to sample.
//
// The .vrma is loaded by three.js's GLTFLoader with VRMAnimationLoaderPlugin, turned into a
// clip for this avatar by createVRMAnimationClip and played by an AnimationMixer; at each
// time the mixer is set and the normalized humanoid bones' quaternions (three-vrm's
// VRMHumanoidRig: what the clip writes) and the normalized hips position are read.
// Prints JSON: {"bones": [...], "rotations": [[[x, y, z, w] per bone] per time],
// "hips": [[x, y, z] per time], "duration": s}.
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [installDir, scenePath] = process.argv.slice(2);
const mod = (p) => import(pathToFileURL(path.join(path.resolve(installDir), "node_modules", p)).href);
const THREE = await mod("three/build/three.module.js");
const { GLTFLoader } = await mod("three/examples/jsm/loaders/GLTFLoader.js");
const core = await mod("@pixiv/three-vrm-core/lib/three-vrm-core.module.js");
const anim = await mod("@pixiv/three-vrm-animation/lib/three-vrm-animation.module.js");

const scene = JSON.parse(readFileSync(scenePath, "utf8"));
const root = new THREE.Object3D();
const nodes = scene.nodes.map((n, i) => {
  const o = new THREE.Object3D();
  o.name = `node${i}`;
  o.position.fromArray(n.t);
  o.quaternion.fromArray(n.r);
  o.scale.fromArray(n.s);
  return o;
});
scene.nodes.forEach((n, i) => (n.parent >= 0 ? nodes[n.parent] : root).add(nodes[i]));
root.updateMatrixWorld(true);

const humanBones = {};
for (const [name, node] of Object.entries(scene.humanoid)) humanBones[name] = { node: nodes[node] };
const humanoid = new core.VRMHumanoid(humanBones);
root.add(humanoid.normalizedHumanBonesRoot);
const vrm = { humanoid, meta: { metaVersion: scene.meta_version }, scene: root };

const data = readFileSync(scene.vrma);
const loader = new GLTFLoader();
loader.register((parser) => new anim.VRMAnimationLoaderPlugin(parser));
const buf = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
const gltf = await new Promise((resolve, reject) => loader.parse(buf, "", resolve, reject));
const vrmAnimation = gltf.userData.vrmAnimations[scene.animation ?? 0];
const clip = anim.createVRMAnimationClip(vrmAnimation, vrm);
const mixer = new THREE.AnimationMixer(root);
const action = mixer.clipAction(clip);
action.setLoop(THREE.LoopOnce, 1);   // a one-shot: the last key holds at the end (our player, after="hold")
action.clampWhenFinished = true;
action.play();

const bones = Object.keys(scene.humanoid).filter((b) => humanoid.getNormalizedBoneNode(b) != null);
const rotations = [];
const hips = [];
for (const t of scene.times) {
  mixer.setTime(t);
  rotations.push(bones.map((b) => humanoid.getNormalizedBoneNode(b).quaternion.toArray()));
  hips.push(humanoid.getNormalizedBoneNode("hips").position.toArray());
}
process.stdout.write(JSON.stringify({ bones, rotations, hips, duration: clip.duration }));
