/* Rejected (unknown function call): foo is a user function, not a known math function. */
double foo(int i)
{
    return 1.0 / (i + 1);
}

void weigh(int n, double x[n])
{
    for (int i = 0; i < n; i++)
        x[i] *= foo(i);
}
