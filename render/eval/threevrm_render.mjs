// three-vrm 3.5.5 renders the jobs of /jobs.json in headless Chromium (software WebGL) and
// posts each frame's raw pixels back to the local server that served this page
// (render/eval/threevrm.py). Nothing here reads the network beyond that server.
//
// Each job: {avatar: URL, width, height, antialias, background: [r, g, b] linear or null,
// camera: {position, target, up, fov_deg, near, far}, light: {direction, color, ambient}
// (linear RGB in swaycam's units: three.js intensity = PI x these, see render/lighting.py),
// times: [s, ...]}. A frame is RGBA8 as the canvas holds it (sRGB-encoded, premultiplied by
// alpha, rows bottom-up), posted to /result/<job>/<frame>. Errors go to /error, the end to /done.
import * as THREE from "three";
import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";
import { VRMLoaderPlugin, VRMUtils } from "@pixiv/three-vrm";

async function post(path, body) {
  await fetch(path, { method: "POST", body });
}

function fail(what) {
  return post("/error", String(what && what.stack ? what.stack : what));
}

window.addEventListener("error", (e) => fail(`${e.message} at ${e.filename}:${e.lineno}`));
window.addEventListener("unhandledrejection", (e) => fail(e.reason));

async function run() {
  const jobs = await (await fetch("/jobs.json")).json();
  for (let j = 0; j < jobs.length; j++) {
    const job = jobs[j];
    const canvas = document.createElement("canvas");
    canvas.width = job.width;
    canvas.height = job.height;
    document.body.appendChild(canvas);
    const renderer = new THREE.WebGLRenderer({
      canvas, antialias: job.antialias, alpha: true, premultipliedAlpha: true, preserveDrawingBuffer: true,
    });
    renderer.setPixelRatio(1);
    renderer.setSize(job.width, job.height, false);
    if (job.background) {
      renderer.setClearColor(new THREE.Color().setRGB(...job.background, THREE.LinearSRGBColorSpace), 1);
    } else {
      renderer.setClearColor(0x000000, 0);
    }

    const scene = new THREE.Scene();
    const light = new THREE.DirectionalLight();
    light.color.setRGB(...job.light.color, THREE.LinearSRGBColorSpace);
    light.intensity = Math.PI;
    light.position.set(...job.light.direction);
    scene.add(light);
    scene.add(light.target);
    const ambient = new THREE.AmbientLight();
    ambient.color.setRGB(...job.light.ambient, THREE.LinearSRGBColorSpace);
    ambient.intensity = Math.PI;
    scene.add(ambient);

    const loader = new GLTFLoader();
    loader.register((parser) => new VRMLoaderPlugin(parser));
    const gltf = await loader.loadAsync(job.avatar);
    const vrm = gltf.userData.vrm;
    VRMUtils.rotateVRM0(vrm);
    scene.add(vrm.scene);
    vrm.scene.traverse((o) => { o.frustumCulled = false; });

    const c = job.camera;
    const camera = new THREE.PerspectiveCamera(c.fov_deg, job.width / job.height, c.near, c.far);
    camera.position.set(...c.position);
    camera.up.set(...c.up);
    camera.lookAt(new THREE.Vector3(...c.target));
    camera.updateMatrixWorld();

    const gl = renderer.getContext();
    const pixels = new Uint8Array(job.width * job.height * 4);
    let previous = 0;
    for (let k = 0; k < job.times.length; k++) {
      // MToon's own clock: MToonMaterial.update(delta) advances the UV animation (what
      // VRM.update does for materials); nothing else moves, so the avatar stays at rest.
      const delta = job.times[k] - previous;
      previous = job.times[k];
      for (const m of vrm.materials ?? []) {
        if (typeof m.update === "function") m.update(delta);
      }
      renderer.render(scene, camera);
      gl.readPixels(0, 0, job.width, job.height, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
      await post(`/result/${j}/${k}`, pixels);
    }
    VRMUtils.deepDispose(vrm.scene);
    renderer.dispose();
    canvas.remove();
  }
  const info = (() => {
    const probe = document.createElement("canvas").getContext("webgl2");
    const ext = probe && probe.getExtension("WEBGL_debug_renderer_info");
    return ext ? probe.getParameter(ext.UNMASKED_RENDERER_WEBGL) : "";
  })();
  await post("/done", JSON.stringify({ three: THREE.REVISION, renderer: info }));
}

run().catch(fail);
