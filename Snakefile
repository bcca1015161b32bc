"""e2store main job: generate/import instances, validate them, enumerate the flat corolle store
at every configured hamming, and summarise the store.

    snakemake --cores 2                      # the built-in demo instances (config.yaml)
    snakemake --cores 2 --config results=out # another output root

Rules live in pipeline/rules/; the config schema in schemas/config.schema.yaml.
"""

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


validate(config, "schemas/config.schema.yaml")


include: "pipeline/rules/common.smk"
include: "pipeline/rules/instances.smk"
include: "pipeline/rules/enumerate.smk"
include: "pipeline/rules/summary.smk"


localrules:
    all,
    generate_instance,
    import_instance,
    validate_instance,
    summary,


rule all:
    input:
        summary_md=result_path("summary.md"),
        summary_json=result_path("summary.json"),
