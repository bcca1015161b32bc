# Enumeration into the single shared flat store; each job's Snakemake output is a receipt.


rule enumerate:
    input:
        instance=instance_file("{name}"),
        report=result_path("instances", "{name}.validate.txt"),
    output:
        receipt=result_path("receipts", "{name}_h{h}.json"),
    log:
        result_path("logs", "enumerate", "{name}_h{h}.log"),
    params:
        store=store_dir(),
        forms=" ".join(f"--form {f}" for f in config["forms"]),
    threads: config["threads"]
    shell:
        # resumable: complete partitions are skipped; the receipt is this instance and
        # hamming's summary (corolles, bytes, checksum) as recorded in the store's manifest
        "(e2store enumerate {input.instance:q} --hamming {wildcards.h} --out {params.store:q}"
        " {params.forms} --threads {threads}"
        " && e2store summary {params.store:q} --instance {input.instance:q}"
        " --hamming {wildcards.h} --json {output.receipt:q}) > {log:q} 2>&1"
