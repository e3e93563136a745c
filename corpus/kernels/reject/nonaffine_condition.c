/* Rejected (non-affine condition): the branch depends on array contents. */
void relu_inplace(int n, double A[n])
{
    for (int i = 0; i < n; i++)
        if (A[i] < 0.0)
            A[i] = 0.0;
}
