// three-vrm reference run for the solver benchmark (see solver/eval/reference.py).
//
// usage: node threevrm_reference.mjs INSTALL_DIR SCENE.json
//
// INSTALL_DIR holds node_modules with three and @pixiv/three-vrm-springbone (the versions
// solver/eval/reference.py installs). SCENE.json (written by solver/eval/reference.py) holds the
// skeleton at rest (parent, translation, xyzw rotation, scale per node), the spring joints
// (node, child node, settings, collider groups, centre), the colliders (node, shape,
// offset, tail, radius, normal, inside) and, per frame, the head's local 4x4 matrix
// (column-major, as three.js stores it).
//
// Per frame: the head's local matrix is set, then VRMSpringBoneManager.update(delta) runs
// (three-vrm's whole spring update: world matrices of the ancestors, one Verlet step per
// joint, tail-sphere collision). Only update() is timed (process.hrtime.bigint, ns).
// Prints JSON: {"frame_ns": [...], "tails": [[x, y, z] per joint, one list per frame]}.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const [installDir, scenePath] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(installDir), "package.json"));
const THREE = require("three");
const SB = require("@pixiv/three-vrm-springbone");

const scene = JSON.parse(readFileSync(scenePath, "utf8"));
const root = new THREE.Object3D();
const nodes = scene.nodes.map((n) => {
  const o = new THREE.Object3D();
  o.position.fromArray(n.t);
  o.quaternion.fromArray(n.r);
  o.scale.fromArray(n.s);
  return o;
});
scene.nodes.forEach((n, i) => (n.parent >= 0 ? nodes[n.parent] : root).add(nodes[i]));
// virtual tails (VRM 0.x leaves): an explicit child at the spring's tail offset
const extra = (scene.virtual_tails || []).map((v) => {
  const o = new THREE.Object3D();
  o.position.fromArray(v.t);
  nodes[v.parent].add(o);
  return o;
});
const objectOf = (k) => (k < nodes.length ? nodes[k] : extra[k - nodes.length]);

// world matrices of the rest pose before the joints take over their bones' matrices
// (a joint sets matrixAutoUpdate = false on its bone; its children read the bone's world)
root.updateMatrixWorld(true);

const colliders = scene.colliders.map((c) => {
  const v = (a) => new THREE.Vector3().fromArray(a);
  let shape;
  if (c.shape === "plane") {
    shape = new SB.VRMSpringBoneColliderShapePlane({ offset: v(c.offset), normal: v(c.normal) });
  } else if (c.shape.endsWith("capsule")) {
    shape = new SB.VRMSpringBoneColliderShapeCapsule({
      offset: v(c.offset), tail: v(c.tail), radius: c.radius, inside: c.shape.startsWith("inside"),
    });
  } else {
    shape = new SB.VRMSpringBoneColliderShapeSphere({
      offset: v(c.offset), radius: c.radius, inside: c.shape.startsWith("inside"),
    });
  }
  const col = new SB.VRMSpringBoneCollider(shape);
  (c.node >= 0 ? nodes[c.node] : root).add(col);
  return col;
});
const groups = scene.collider_groups.map((g) => ({ name: g.name, colliders: g.colliders.map((k) => colliders[k]) }));

const manager = new SB.VRMSpringBoneManager();
const joints = scene.joints.map((j) => {
  const joint = new SB.VRMSpringBoneJoint(nodes[j.node], objectOf(j.child), {
    hitRadius: j.hit_radius, stiffness: j.stiffness, gravityPower: j.gravity_power,
    gravityDir: new THREE.Vector3().fromArray(j.gravity_dir), dragForce: j.drag_force,
  }, j.groups.map((g) => groups[g]));
  if (j.center >= 0) joint.center = nodes[j.center];
  manager.addJoint(joint);
  return joint;
});
manager.setInitState();

const head = nodes[scene.head];
const m = new THREE.Matrix4();
const delta = scene.delta;
const frameNs = [];
const tails = [];
const keepTails = scene.keep_tails;
const w = new THREE.Vector3();
for (let f = 0; f < scene.head_local.length; f++) {
  m.fromArray(scene.head_local[f]);
  m.decompose(head.position, head.quaternion, head.scale);
  const t0 = process.hrtime.bigint();
  manager.update(delta);
  frameNs.push(Number(process.hrtime.bigint() - t0));
  if (f < keepTails) {
    // the tail each joint's bone now points at, in world space
    tails.push(joints.map((j) => {
      j.bone.updateWorldMatrix(false, false);
      return j.bone.localToWorld(w.copy(j.initialLocalChildPosition)).toArray();
    }));
  }
}
process.stdout.write(JSON.stringify({ frame_ns: frameNs, tails }));
