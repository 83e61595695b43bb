"""VRM meta (VRMC_vrm.meta 1.0, VRM.meta 0.x) -> :class:`Meta` in VRM 1.0 terms."""

from __future__ import annotations

from .model import Meta

_VRM0_LICENSE = {
    "Redistribution_Prohibited": "", "CC0": "https://creativecommons.org/publicdomain/zero/1.0/",
    "CC_BY": "https://creativecommons.org/licenses/by/4.0/", "CC_BY_NC": "https://creativecommons.org/licenses/by-nc/4.0/",
    "CC_BY_SA": "https://creativecommons.org/licenses/by-sa/4.0/",
    "CC_BY_NC_SA": "https://creativecommons.org/licenses/by-nc-sa/4.0/",
    "CC_BY_ND": "https://creativecommons.org/licenses/by-nd/4.0/",
    "CC_BY_NC_ND": "https://creativecommons.org/licenses/by-nc-nd/4.0/", "Other": "",
}


def _license_name_1(url: str) -> str:
    if "vrm.dev/licenses/1.0" in url:
        return "VRM Public License 1.0"
    for name, known in _VRM0_LICENSE.items():
        if known and known.rstrip("/") == url.rstrip("/"):
            return name
    return url


def build_meta(doc_json: dict, vrm1: dict | None, vrm0: dict | None) -> Meta:
    if vrm1 is not None:
        m = vrm1.get("meta") or {}
        return Meta(
            name=str(m.get("name", "")),
            version=str(m.get("version", "")),
            authors=tuple(str(a) for a in m.get("authors", []) or []),
            copyright=str(m.get("copyrightInformation", "")),
            contact=str(m.get("contactInformation", "")),
            references=tuple(str(r) for r in m.get("references", []) or []),
            license_url=str(m.get("licenseUrl", "")),
            license_name=_license_name_1(str(m.get("licenseUrl", ""))),
            avatar_permission=str(m.get("avatarPermission", "")),
            commercial_usage=str(m.get("commercialUsage", "")),
            allow_redistribution=m.get("allowRedistribution"),
            modification=str(m.get("modification", "")),
            other_license_url=str(m.get("otherLicenseUrl", "")),
        )
    if vrm0 is not None:
        m = vrm0.get("meta") or {}
        lic = str(m.get("licenseName", ""))
        author = str(m.get("author", ""))
        extra = tuple(
            (k, str(m[k])) for k in ("allowedUserName", "violentUssageName", "sexualUssageName") if k in m
        )
        return Meta(
            name=str(m.get("title", "")),
            version=str(m.get("version", "")),
            authors=(author,) if author else (),
            contact=str(m.get("contactInformation", "")),
            references=(str(m["reference"]),) if m.get("reference") else (),
            license_url=_VRM0_LICENSE.get(lic, "") or str(m.get("otherLicenseUrl", "")),
            license_name=lic,
            avatar_permission=str(m.get("allowedUserName", "")),
            commercial_usage=str(m.get("commercialUssageName", "")),
            allow_redistribution=None if lic == "" else lic != "Redistribution_Prohibited",
            other_license_url=str(m.get("otherLicenseUrl", "")),
            extra=extra,
        )
    asset = doc_json.get("asset", {}) or {}
    return Meta(name=str((doc_json.get("scenes") or [{}])[0].get("name", "")),
                copyright=str(asset.get("copyright", "")),
                extra=(("generator", str(asset.get("generator", ""))),))
