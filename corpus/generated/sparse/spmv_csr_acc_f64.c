/*
 * CSR sparse matrix-vector product through a row accumulator (double).
 */
void spmv_csr_acc_f64(int n, int m, int nnz, int rowptr[n + 1], int col[nnz], double val[nnz],
                      double x[m], double y[n])
{
    int i, j;

    for (i = 0; i < n; i++) {
        double s = 0.0;
        for (j = rowptr[i]; j < rowptr[i + 1]; j++)
            s += val[j] * x[col[j]];
        y[i] = s;
    }
}
