# Statistics tables laid out like the published study, and their plots (also in the report).


rule tables:
    input:
        receipts=receipt_files(),
        instances=expand(instance_file("{name}"), name=NAMES),
    output:
        [
            report(
                result_path("tables", f"{metric}_h{h}.{ext}"),
                caption="../report/tables.rst",
                category="Tables",
                subcategory=f"hamming {h}",
                labels={"metric": metric, "hamming": str(h), "file": ext},
            )
            for h in HAMMING
            for metric in TABLE_METRICS
            for ext in ("csv", "md")
        ],
    log:
        result_path("logs", "tables.log"),
    params:
        store=store_dir(),
        outdir=lambda wc, output: os.path.dirname(output[0]),
        form=table_form(),
        select=lambda wc, input: summary_selection(input.instances),
    shell:
        "e2store tables --store {params.store:q} {params.select} --form {params.form}"
        " -o {params.outdir:q} > {log:q} 2>&1"


rule plots:
    input:
        receipts=receipt_files(),
        instances=expand(instance_file("{name}"), name=NAMES),
    output:
        [
            report(
                result_path("plots", f"{metric}.png"),
                caption="../report/plots.rst",
                category="Plots",
                labels={"metric": metric},
            )
            for metric in PLOT_METRICS
        ],
    log:
        result_path("logs", "plots.log"),
    params:
        store=store_dir(),
        outdir=lambda wc, output: os.path.dirname(output[0]),
        form=table_form(),
        select=lambda wc, input: summary_selection(input.instances),
    shell:
        "e2store plot --store {params.store:q} {params.select} --form {params.form}"
        " -o {params.outdir:q} > {log:q} 2>&1"
