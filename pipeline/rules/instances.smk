# Instances: generate the demo ones, import the given piece files, validate every one.


rule generate_instance:
    output:
        instance=result_path("instances", "{demo}.e2s"),
    log:
        result_path("logs", "generate_instance", "{demo}.log"),
    params:
        size=lambda wc: demo_size(wc.demo),
        frame_colours=lambda wc: DEMO[wc.demo]["frame_colours"],
        inner_colours=lambda wc: DEMO[wc.demo]["inner_colours"],
        seed=lambda wc: DEMO[wc.demo]["seed"],
    shell:
        "e2store generate-instance --size {params.size} --frame-colours {params.frame_colours}"
        " --inner-colours {params.inner_colours} --seed {params.seed} --name {wildcards.demo:q}"
        " -o {output.instance:q} > {log:q} 2>&1"


rule import_instance:
    input:
        pieces=lambda wc: EXTERNAL[wc.external],
    output:
        instance=result_path("instances", "{external}.e2s"),
    log:
        result_path("logs", "import_instance", "{external}.log"),
    run:
        # any supported piece format -> the canonical e2store file, named after the config key
        from e2store.instance.formats import convert_instance

        inst = convert_instance(input.pieces, output.instance, name=wildcards.external)
        Path(log[0]).write_text(f"{input.pieces}: imported as {inst.id}\n")


rule validate_instance:
    input:
        instance=instance_file("{name}"),
    output:
        report=result_path("instances", "{name}.validate.txt"),
    log:
        result_path("logs", "validate_instance", "{name}.log"),
    shell:
        # exit 1 (warnings: unsolvable, still enumerable) is accepted; 2 (error) fails the job
        "e2store validate {input.instance:q} > {output.report:q} 2> {log:q} || [ $? -eq 1 ]"


rule zone_map:
    input:
        instance=instance_file("{name}"),
    output:
        zones=result_path("zones", "{name}_h{h}.json"),
    log:
        result_path("logs", "zone_map", "{name}_h{h}.log"),
    params:
        # read from the instance file once it exists (imported instances have no size in
        # the config); a dry run shows <TBD> until then
        size=lambda wc, input: board_size(input.instance),
    shell:
        "e2store zones --size {params.size} --hamming {wildcards.h} --json"
        " > {output.zones:q} 2> {log:q}"


rule instance_stats:
    input:
        instance=instance_file("{name}"),
        report=result_path("instances", "{name}.validate.txt"),
    output:
        stats=result_path("stats", "{name}.json"),
    log:
        result_path("logs", "instance_stats", "{name}.log"),
    shell:
        "e2store stats {input.instance:q} --json > {output.stats:q} 2> {log:q}"
