# The store, written in stages (e2store/stages.py) into one shared store directory:
#
#   plan (checkpoint)  zone corolles (factorised count) -> shards per zone
#   shard              shard K of S of a big zone's walk -> STORE/.shards/ (rotation 0, flat)
#   enumerate          a zone's rotation-0 flat partition: walked here, or gathered from its
#                      shards when the plan cut it into several
#   rotate             the rotator: rotation 1, 2 or 3 of the zone (those its members
#                      need), derived from its rotation 0
#   encode             a compact form of every rotation of the zone: prefix from the flat
#                      rows, cartesian from the instance's stems
#   receipt            the instance/hamming summary once all its partitions exist
#
# Each job's Snakemake output is a receipt (its records as JSON); the store itself is
# written atomically by e2store, so a killed job leaves nothing partial in view.


checkpoint plan:
    input:
        instance=instance_file("{name}"),
        report=result_path("instances", "{name}.validate.txt"),
    output:
        plan=result_path("plans", "{name}_h{h}.json"),
    log:
        result_path("logs", "plan", "{name}_h{h}.log"),
    params:
        shard_corolles=config["shard_corolles"],
        max_shards=config["max_shards"],
    threads: config["threads"]
    shell:
        "e2store stage plan {input.instance:q} --hamming {wildcards.h}"
        " --shard-corolles {params.shard_corolles} --max-shards {params.max_shards}"
        " --threads {threads} -o {output.plan:q} > {log:q} 2>&1"


rule shard:
    input:
        instance=instance_file("{name}"),
        plan=result_path("plans", "{name}_h{h}.json"),
    output:
        receipt=receipt_path("{name}", "{h}", "{zone}", "shard-{shard}-of-{shards}"),
    log:
        result_path("logs", "shard", "{name}_h{h}_z{zone}_{shard}-of-{shards}.log"),
    params:
        store=store_dir(),
    threads: config["threads"]
    shell:
        "e2store stage shard {input.instance:q} --store {params.store:q} --hamming {wildcards.h}"
        " --zone {wildcards.zone} --shard {wildcards.shard}/{wildcards.shards}"
        " --threads {threads} -o {output.receipt:q} > {log:q} 2>&1"


rule enumerate:
    input:
        instance=instance_file("{name}"),
        plan=result_path("plans", "{name}_h{h}.json"),
        shards=shard_receipts,
    output:
        receipt=receipt_path("{name}", "{h}", "{zone}", "flat.r0"),
    log:
        result_path("logs", "enumerate", "{name}_h{h}_z{zone}.log"),
    params:
        store=store_dir(),
        # one shard: walk it here; several: publish what the shard jobs wrote
        step=lambda wc: ("shard --shard 0/1" if zone_plan(wc)["shards"] == 1
                         else f"gather --shards {zone_plan(wc)['shards']}"),
    threads: lambda wc: 1 if zone_plan(wc)["shards"] > 1 else config["threads"]
    shell:
        "e2store stage {params.step} {input.instance:q} --store {params.store:q}"
        " --hamming {wildcards.h} --zone {wildcards.zone} -o {output.receipt:q}"
        " > {log:q} 2>&1"


rule rotate:
    input:
        instance=instance_file("{name}"),
        source=receipt_path("{name}", "{h}", "{zone}", "{form}.r0"),
    output:
        receipt=receipt_path("{name}", "{h}", "{zone}", "{form}.r{rotation}"),
    log:
        result_path("logs", "rotate", "{name}_h{h}_z{zone}_r{rotation}.{form}.log"),
    params:
        store=store_dir(),
    wildcard_constraints:
        rotation="[123]",
    shell:
        "e2store stage rotate {input.instance:q} --store {params.store:q} --hamming {wildcards.h}"
        " --zone {wildcards.zone} --rotation {wildcards.rotation} --form {wildcards.form}"
        " -o {output.receipt:q} > {log:q} 2>&1"


rule encode:
    input:
        instance=instance_file("{name}"),
        plan=result_path("plans", "{name}_h{h}.json"),
        flat=lambda wc: flat_receipts(wc) if wc.form == "prefix" else [],
    output:
        receipt=receipt_path("{name}", "{h}", "{zone}", "{form}.encoded"),
    log:
        result_path("logs", "encode", "{name}_h{h}_z{zone}.{form}.log"),
    params:
        store=store_dir(),
    wildcard_constraints:
        form="prefix|cartesian",
    shell:
        "e2store stage encode {input.instance:q} --store {params.store:q} --hamming {wildcards.h}"
        " --zone {wildcards.zone} --form {wildcards.form} -o {output.receipt:q}"
        " > {log:q} 2>&1"


rule receipt:
    input:
        instance=instance_file("{name}"),
        partitions=zone_receipts,
    output:
        receipt=result_path("receipts", "{name}_h{h}.json"),
    log:
        result_path("logs", "receipt", "{name}_h{h}.log"),
    params:
        store=store_dir(),
    shell:
        # this instance and hamming's summary (corolles, bytes, checksum) from the manifest
        "e2store summary --store {params.store:q} --instance {input.instance:q}"
        " --hamming {wildcards.h} -o {output.receipt:q} > {log:q} 2>&1"
